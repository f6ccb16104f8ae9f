import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { pathPastPythonShim, printRows, withoutMachineStartCosts } from '../../bench/measure.ts';
import { resolvePython } from '../../runtime/tools/custom/python-interpreter.ts';
import { tempDir } from '../helpers/project.ts';

describe('printRows', () => {
  afterEach(() => vi.restoreAllMocks());

  const printed = (rows: Parameters<typeof printRows>[0]) => {
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    return { allMet: printRows(rows), lines };
  };

  it('says met for a figure at or under its goal, and MISSED over it', () => {
    const { allMet, lines } = printed([
      { measure: 'fast', result: '1 ms', ratio: 0.5, goal: 1 },
      { measure: 'slow', result: '3 ms', ratio: 3, goal: 1 },
    ]);
    expect(allMet).toBe(false);
    expect(lines.find((l) => l.startsWith('fast'))).toMatch(/met$/);
    expect(lines.find((l) => l.startsWith('slow'))).toMatch(/MISSED$/);
  });

  it('never says met for a failed run, however fast (a red suite is not a suite within budget)', () => {
    const { allMet, lines } = printed([{ measure: 'test suite (FAILED)', result: '68 s', ratio: 0.56, goal: 1, failed: true }]);
    expect(allMet).toBe(false);
    expect(lines.at(-1)).toMatch(/MISSED$/);
  });
});

describe('withoutMachineStartCosts', () => {
  const saved = process.env.NODE_EXTRA_CA_CERTS;
  afterEach(() => {
    if (saved === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
    else process.env.NODE_EXTRA_CA_CERTS = saved;
    vi.restoreAllMocks();
  });

  it('keeps NODE_EXTRA_CA_CERTS from the processes a bench measures, and says so', () => {
    process.env.NODE_EXTRA_CA_CERTS = '/etc/ssl/certs/ca-certificates.crt';
    const said: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => void said.push(line));
    withoutMachineStartCosts();
    const child = spawnSync(process.execPath, ['-p', 'JSON.stringify(process.env.NODE_EXTRA_CA_CERTS ?? null)'], { encoding: 'utf8' });
    expect(JSON.parse(child.stdout)).toBeNull();
    expect(said).toEqual([expect.stringMatching(/without this machine's NODE_EXTRA_CA_CERTS/)]);
  });
});

describe('pathPastPythonShim', () => {
  it("puts the interpreter a shim runs first on PATH, ahead of the shim", async () => {
    const real = await resolvePython();
    const shims = tempDir('forge-shims-');
    writeFileSync(join(shims, 'python3'), `#!/bin/sh\nexec ${real} "$@"\n`, { mode: 0o755 });
    const path = pathPastPythonShim({ PATH: `${shims}${delimiter}/usr/bin${delimiter}/bin` });
    expect(path?.split(delimiter)).toEqual([dirname(real), shims, '/usr/bin', '/bin']);
  });

  it('leaves PATH alone when python3 on it is the interpreter, or there is none', async () => {
    const dir = tempDir('forge-python-link-');
    symlinkSync(await resolvePython(), join(dir, 'python3'));
    expect(pathPastPythonShim({ PATH: dir })).toBeUndefined();
    expect(pathPastPythonShim({ PATH: tempDir('forge-no-python-') })).toBeUndefined();
  });
});
