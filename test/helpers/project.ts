/** Test projects in temp dirs, and the real `forge` command run as a process. */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const fixturesDir = join(repoRoot, 'test', 'fixtures');
export const forgeBin = join(repoRoot, 'bin', 'forge.cjs');

const created: string[] = [];

/**
 * Removes the temp dirs made so far. test/clean-up-each-file.ts calls it after
 * each test file: not an afterAll here, which would be registered once per
 * worker (files share a worker's modules) and clean up after its first file only.
 */
export function removeTempDirs(): void {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * A fresh directory, removed when the test file ends. `base`: where, when the
 * test needs it outside /tmp (every tool sandbox replaces /tmp with its own).
 */
export function tempDir(prefix = 'forge-test-', base = tmpdir()): string {
  // realpath: macOS's /tmp is a symlink, and paths in output are compared as strings.
  const dir = realpathSync(mkdtempSync(join(base, prefix)));
  created.push(dir);
  return dir;
}

/** A copy of test/fixtures/NAME in a fresh temp dir. */
export function fixtureProject(name: string): string {
  const dir = tempDir(`forge-${name}-`);
  cpSync(join(fixturesDir, name), dir, { recursive: true });
  return dir;
}

/** A project made of the given files (path → content). */
export function writeProject(files: Record<string, string>): string {
  const dir = tempDir();
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `command` run to its end, or killed (SIGKILL, code null) after `timeoutMs` when given. */
export function runProcess(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number }): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, NO_COLOR: '1', ...options.env }, stdio: ['pipe', 'pipe', 'pipe'], timeout: options.timeoutMs, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    // A process that exits without reading its stdin closes the pipe (EPIPE): its exit code and output are the result.
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

export function forge(args: string[], cwd: string, env?: NodeJS.ProcessEnv): Promise<ProcessResult> {
  return runProcess(process.execPath, [forgeBin, ...args], { cwd, env });
}

export const minimalConfig = (extra = '') => `agent_id: test-agent\nversion: 1.0.0\ndescription: A test agent.\n${extra}`;

/**
 * Copies a built project's .forge-output/ into a fresh directory that holds
 * nothing else — no sources, no node_modules, no Forge — the way a bundle is
 * deployed. Returns that directory (a work dir) and the bundle in it.
 */
export function deployBundle(project: string, prefix = 'forge-deploy-'): { workDir: string; bundle: string } {
  const workDir = tempDir(prefix);
  cpSync(join(project, '.forge-output'), join(workDir, '.forge-output'), { recursive: true });
  const entries = readdirSync(workDir);
  if (entries.length !== 1 || entries[0] !== '.forge-output') throw new Error(`the deploy dir holds more than the bundle: ${entries.join(', ')}`);
  return { workDir, bundle: join(workDir, '.forge-output') };
}

/** Bytes of code a bundle ships: runtime.mjs, the runtime core and the prebuilt modules in vendor/. */
export function bundleCodeSize(outputDir: string): number {
  const vendor = join(outputDir, 'vendor');
  const vendorFiles = existsSync(vendor) ? readdirSync(vendor).map((name) => join(vendor, name)) : [];
  return [join(outputDir, 'runtime.mjs'), join(outputDir, 'forge-runtime.cjs'), ...vendorFiles].reduce((sum, file) => sum + statSync(file).size, 0);
}
