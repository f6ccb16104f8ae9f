/**
 * Where the runtime starts processes. A tool call that starts one goes
 * through runCommand, which takes one of the runtime's process slots
 * (FORGE_TOOL_PROCESSES); the rest are one warm process per tool or one
 * check at start. A new place that starts processes must be listed here
 * with why it needs no slot, or it would let a flood of calls start a
 * process each again (grep_search's rg once did).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/project.ts';

const STARTS_PROCESSES: Record<string, string> = {
  'runtime/exec/process-tree.ts': 'spawnInGroup, for runCommand (which takes a slot) and the tool workers',
  'runtime/exec/sandbox-probe.ts': 'asks bubblewrap once, at start',
  'runtime/tools/emergent/sandbox-process.ts': "one warm sandbox per forged tool, and a check of node's permission flags once",
  'runtime/tools/code-agent/grep/ripgrep-engine.ts': 'rg, inside the slot grep-search.ts takes for the search',
  'runtime/tools/custom/python-interpreter.ts': 'finds the Python interpreter once',
  'runtime/tools/custom/python-dependencies-check.ts': 'checks the declared Python packages once, at start',
};

/** spawnInGroup's callers: each call of runCommand takes a slot; a worker is one process per tool. */
const SPAWNS_IN_GROUP = ['runtime/exec/run-command.ts', 'runtime/tools/custom/tool-worker.ts'];

function runtimeSources(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) files.push(relative(repoRoot, path));
    }
  };
  walk(join(repoRoot, 'runtime'));
  return files;
}

describe('where the runtime starts processes', () => {
  const sources = runtimeSources().map((file) => ({ file, text: readFileSync(join(repoRoot, file), 'utf8') }));

  it('only the listed files start processes themselves (node:child_process, other than types)', () => {
    const starting = sources.filter(({ text }) => /^import\s+(?!type\b)[^;]*from\s+'node:child_process'/m.test(text) || /require\(['"](node:)?child_process['"]\)|import\(['"](node:)?child_process['"]\)/.test(text)).map(({ file }) => file);
    expect(starting.sort()).toEqual(Object.keys(STARTS_PROCESSES).sort());
  });

  it('only runCommand and the tool workers start processes through spawnInGroup', () => {
    const callers = sources.filter(({ file, text }) => file !== 'runtime/exec/process-tree.ts' && /\bspawnInGroup\(/.test(text)).map(({ file }) => file);
    expect(callers.sort()).toEqual([...SPAWNS_IN_GROUP].sort());
  });
});
