/**
 * Forged tools on disk, under the work dir's .forge/forged/<name>/:
 * tool.json (the request but its code, tier, owner, when), code.js (a
 * sandboxed tool's code: the one file its sandbox process may read),
 * tests.json (the binding test cases and their results) and verdict.json.
 * The running agent registers them again at start, so they survive a restart.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TOOL_NAME_PATTERN } from '../names.ts';
import type { ForgedRemoval } from '../../state/store.ts';
import type { ForgeRequest, ForgeResult, TestResult, Tier } from './forge-request.ts';

export interface ForgedRecord {
  request: ForgeRequest;
  tier: Tier;
  /** The session that forged a session-tier tool (`context:ID`, `mcp:ID`, `stdio`). */
  owner?: string;
  forgedAt: string;
  verdict: ForgeResult['verdict'];
  testResults: TestResult[];
}

export function forgedRoot(workDir: string): string {
  return join(workDir, '.forge', 'forged');
}

export class ForgedStore {
  constructor(readonly root: string) {}

  dir(name: string): string {
    if (!TOOL_NAME_PATTERN.test(name)) throw new Error(`"${name}" is not a tool name`);
    return join(this.root, name);
  }

  codeFile(name: string): string {
    return join(this.dir(name), 'code.js');
  }

  /**
   * Puts a candidate's code where its sandbox reads it, before its tests run
   * (the store's record follows once it is approved).
   */
  stageCode(name: string, code: string): void {
    mkdirSync(this.dir(name), { recursive: true, mode: 0o700 });
    writeFileSync(this.codeFile(name), code);
  }

  /** Writes a record (into a fresh directory, then renamed over the old one, so a reader never sees half of it). */
  save(record: ForgedRecord): void {
    const { name } = record.request;
    const final = this.dir(name);
    // A dot-name: never read as a tool's directory.
    const staging = join(this.root, `.staging-${name}-${process.pid}-${Date.now()}`);
    mkdirSync(staging, { recursive: true, mode: 0o700 });
    const { implementation, testCases, ...rest } = record.request;
    const impl = implementation.mode === 'sandbox' ? { mode: 'sandbox', allowlist: implementation.allowlist ?? [] } : implementation;
    writeFileSync(join(staging, 'tool.json'), JSON.stringify({ ...rest, implementation: impl, tier: record.tier, owner: record.owner, forgedAt: record.forgedAt }, null, 2) + '\n');
    if (implementation.mode === 'sandbox') writeFileSync(join(staging, 'code.js'), implementation.code);
    writeFileSync(join(staging, 'tests.json'), JSON.stringify({ testCases, results: record.testResults }, null, 2) + '\n');
    writeFileSync(join(staging, 'verdict.json'), JSON.stringify(record.verdict, null, 2) + '\n');
    rmSync(final, { recursive: true, force: true });
    renameSync(staging, final);
  }

  load(name: string): ForgedRecord | undefined {
    const dir = this.dir(name);
    if (!existsSync(join(dir, 'tool.json'))) return undefined;
    const tool = JSON.parse(readFileSync(join(dir, 'tool.json'), 'utf8'));
    const tests = JSON.parse(readFileSync(join(dir, 'tests.json'), 'utf8'));
    const verdict = JSON.parse(readFileSync(join(dir, 'verdict.json'), 'utf8'));
    const { tier, owner, forgedAt, implementation, ...request } = tool;
    const impl = implementation.mode === 'sandbox' ? { ...implementation, code: readFileSync(join(dir, 'code.js'), 'utf8') } : implementation;
    return { request: { ...request, implementation: impl, testCases: tests.testCases }, tier, owner, forgedAt, verdict, testResults: tests.results };
  }

  /** Every stored tool; one that cannot be read is reported and skipped. */
  list(onProblem: (name: string, err: Error) => void = () => {}): ForgedRecord[] {
    if (!existsSync(this.root)) return [];
    const records: ForgedRecord[] = [];
    for (const entry of readdirSync(this.root, { withFileTypes: true })) {
      if (!entry.isDirectory() || !TOOL_NAME_PATTERN.test(entry.name)) continue;
      try {
        const record = this.load(entry.name);
        if (record) records.push(record);
      } catch (err) {
        onProblem(entry.name, err as Error);
      }
    }
    return records.sort((a, b) => (a.request.name < b.request.name ? -1 : 1));
  }

  /** Whether a record is kept under `name` (served or not: allow_tools or max_tools may leave it unregistered). */
  holds(name: string): boolean {
    return existsSync(join(this.dir(name), 'tool.json'));
  }

  /** Removes a refused candidate's staged code (a directory without a record). */
  removeUnrecorded(name: string): void {
    if (!existsSync(join(this.dir(name), 'tool.json'))) rmSync(this.dir(name), { recursive: true, force: true });
  }

  remove(name: string): boolean {
    const dir = this.dir(name);
    if (!existsSync(dir)) return false;
    rmSync(dir, { recursive: true, force: true });
    return true;
  }

  /** Removes the session-tier tools forged by these sessions (their conversations deleted); returns which went. */
  removeSessionTools(owners: ReadonlySet<string>): ForgedRemoval[] {
    const removed: ForgedRemoval[] = [];
    for (const record of this.list()) {
      if (record.tier !== 'session' || !record.owner || !owners.has(record.owner)) continue;
      if (this.remove(record.request.name)) removed.push({ name: record.request.name, forgedAt: record.forgedAt });
    }
    return removed;
  }

  /** Marks a stored tool as agent-tier (`forge tool promote` on a running agent's store). */
  setTier(name: string, tier: Tier): void {
    const file = join(this.dir(name), 'tool.json');
    const tool = JSON.parse(readFileSync(file, 'utf8'));
    tool.tier = tier;
    if (tier === 'agent') delete tool.owner;
    writeFileSync(file, JSON.stringify(tool, null, 2) + '\n');
  }
}
