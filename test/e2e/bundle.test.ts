/**
 * The built bundle runs with plain node from a directory that holds nothing
 * but .forge-output/: no node_modules, no sources, no Forge.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { deployBundle, fixtureProject, forge, forgeBin, runProcess } from '../helpers/project.ts';

let bundleDir: string;
let workDir: string;

beforeAll(async () => {
  const project = fixtureProject('basic');
  const built = await forge(['build', '--prod'], project);
  expect(built.code, built.stderr).toBe(0);
  ({ workDir, bundle: bundleDir } = deployBundle(project));
});

const runtime = (args: string[], env?: NodeJS.ProcessEnv) => runProcess(process.execPath, [join(bundleDir, 'runtime.mjs'), ...args], { cwd: workDir, env });

describe('node runtime.mjs', () => {
  it('lists its tools, and no dev tool', async () => {
    const { code, stdout } = await runtime(['tools']);
    expect(code).toBe(0);
    expect(stdout.split('\n').filter(Boolean).map((l) => l.split(/\s+/)[0])).toEqual(['echo_py', 'env_probe', 'py_script', 'ts_execute', 'ts_script', 'uuid_generate']);
  });

  it.each([
    ['echo_py', { message: 'deployed', times: 2 }, { echo: 'DEPLOYED DEPLOYED' }],
    ['py_script', { a: 40, b: 2 }, { sum: 42 }],
    ['ts_execute', { sentence: 'runs anywhere' }, { reversed: 'anywhere runs' }],
    ['ts_script', { text: 'abc' }, { length: 3 }],
  ])('calls %s', async (name, args, expected) => {
    const { code, stdout, stderr } = await runtime(['call', name, JSON.stringify(args)]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual(expected);
  });

  it('calls a builtin tool', async () => {
    const { stdout } = await runtime(['call', 'uuid_generate', '{"version": 7}']);
    expect(JSON.parse(stdout).uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('refuses a stripped dev tool', async () => {
    const { code, stderr } = await runtime(['call', 'dev_probe_ts', '{}']);
    expect(code).toBe(1);
    expect(stderr).toContain('no tool named "dev_probe_ts"');
  });

  it('exits 1 with a clear error for bad arguments, 2 for bad JSON', async () => {
    const bad = await runtime(['call', 'echo_py', '{"times": "x"}']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('missing required argument "message"');
    expect((await runtime(['call', 'echo_py', '{oops'])).code).toBe(2);
  });

  it('passes through only the variables forge.yaml names', async () => {
    const { stdout } = await runtime(['call', 'env_probe'], { FORGE_TEST_ALLOWED: 'yes', SECRET_TOKEN: 'sk-secret' });
    const seen = JSON.parse(stdout) as { names: string[]; allowed: string };
    expect(seen.allowed).toBe('yes');
    expect(seen.names).not.toContain('SECRET_TOKEN');
    expect(seen.names).toContain('HOME');
  });

  it('prints a tool\'s spec with describe', async () => {
    const { stdout } = await runtime(['describe', 'echo_py']);
    expect(JSON.parse(stdout)).toMatchObject({ name: 'echo_py', source: { path: 'tools/echo_py.py' } });
  });
});

/** Runs a command whose reader has already gone (`… | head -0`): every write it makes meets a closed pipe. */
function withClosedStdout(command: string, args: string[], cwd: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('a reader that stops reading early (| head)', () => {
  it.each([['tools'], ['tools', '--json'], ['describe', 'echo_py'], ['call', 'py_script', '{"a": 1, "b": 2}'], ['help']])('node runtime.mjs %s ends quietly, without a stack trace', async (...args) => {
    const { code, stderr } = await withClosedStdout(process.execPath, [join(bundleDir, 'runtime.mjs'), ...args], workDir);
    expect(stderr).not.toMatch(/EPIPE|Unhandled|at /);
    expect(code).toBe(0);
  });

  it('forge tool list ends quietly too', async () => {
    const { code, stderr } = await withClosedStdout(process.execPath, [forgeBin, 'tool', 'list'], fixtureProject('basic'));
    expect(stderr).not.toMatch(/EPIPE|Unhandled|at /);
    expect(code).toBe(0);
  });
});
