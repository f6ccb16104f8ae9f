/** Ctrl-C during forge build: no staging directory is left beside the output, and the last complete output stays as it was. */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forge, forgeBin, minimalConfig, writeProject } from '../helpers/project.ts';

const tool = (word: string) => `/**\n * Tool: shout\n * Description: Shouts.\n * Tags: read\n */\nexport function execute() {\n  return '${word}';\n}\n`;

describe('forge build interrupted', () => {
  it('removes its staging directory and keeps the last output', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n'), 'tools/shout.ts': tool('first') });
    expect((await forge(['build'], project)).code).toBe(0);
    const before = readFileSync(join(project, '.forge-output', 'agent.json'), 'utf8');
    writeFileSync(join(project, 'tools/shout.ts'), tool('second'));

    const child = spawn(process.execPath, [forgeBin, 'build', '--no-cache'], { cwd: project, stdio: 'ignore' });
    const staging = () => readdirSync(project).filter((name) => name.includes('.staging-'));
    // Interrupted while its staging directory is there, as a person's Ctrl-C would find it.
    let seen = false;
    while (child.exitCode === null && !seen) {
      seen = staging().length > 0;
      if (!seen) await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(seen, 'the build finished before its staging directory was seen').toBe(true);
    child.kill('SIGINT');
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
    expect(signal ?? code).toBe('SIGINT');
    expect(staging()).toEqual([]);
    expect(readFileSync(join(project, '.forge-output', 'agent.json'), 'utf8')).toBe(before);
  }, 60_000);

  it('the next build removes a staging directory a killed build left, not one of a build still running', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    // pid 4194304 is past Linux's highest: no process has it. This test's own process is running.
    for (const pid of [4194304, process.pid]) mkdirSync(join(project, `..forge-output.staging-${pid}`, 'tools'), { recursive: true });
    mkdirSync(join(project, '..forge-output.staging-4194304.previous'));
    // Left a while ago: one touched in the last minute may be a build in another PID namespace.
    const old = new Date(Date.now() - 5 * 60_000);
    for (const name of ['..forge-output.staging-4194304', '..forge-output.staging-4194304.previous']) utimesSync(join(project, name), old, old);
    mkdirSync(join(project, '..forge-output.staging-4194303'));
    expect((await forge(['build'], project)).code).toBe(0);
    expect(readdirSync(project).filter((name) => name.includes('.staging-')).sort()).toEqual(['..forge-output.staging-4194303', `..forge-output.staging-${process.pid}`].sort());
  }, 60_000);
});
