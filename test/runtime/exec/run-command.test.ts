/**
 * A command that leaves a child outside its process group holding its
 * pipes (setsid, a daemon started without redirecting its output) once
 * kept the call — and its process slot — waiting as long as that child
 * lived. Without the sandbox's PID namespace nothing can reach it; the call
 * ends anyway, with the output that came.
 */
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { ProcessSlots } from '../../../runtime/exec/process-slots.ts';
import { runCommand } from '../../../runtime/exec/run-command.ts';
import { tempDir } from '../../helpers/project.ts';

// A duration no other process uses, to find the orphan again.
const ORPHAN = 'sleep 97.3141';
afterEach(() => {
  try {
    execFileSync('pkill', ['-f', ORPHAN]);
  } catch {
    // none left
  }
});

describe('runCommand', () => {
  it('ends a call whose command exited while a child that left its process group still holds the pipes, and frees its slot', async () => {
    const slots = new ProcessSlots(1, 0);
    // The command waits until the orphan is in its own session (it wrote its pid), so the group kill cannot reach it.
    const script = `setsid sh -c 'echo $$ > orphan.pid; exec ${ORPHAN}' & while [ ! -s orphan.pid ]; do sleep 0.01; done; echo started`;
    const options = { command: 'sh', args: ['-c', script], cwd: tempDir(), env: { PATH: process.env.PATH ?? '' }, slots };
    const first = await runCommand(options);
    expect(first).toMatchObject({ exitCode: 0, stdout: 'started\n', cancelled: false });
    // The orphan lives on (nothing outside a sandbox can reach it), but the slot is free again.
    expect(execFileSync('pgrep', ['-f', ORPHAN], { encoding: 'utf8' }).trim()).not.toBe('');
    const second = await runCommand({ ...options, args: ['-c', 'echo again'] });
    expect(second).toMatchObject({ exitCode: 0, stdout: 'again\n' });
    expect(second.busy).toBeUndefined();
  }, 20_000);

  it("ends a background child in the command's own group with the command, without waiting for its output", async () => {
    const result = await runCommand({ command: 'sh', args: ['-c', '(sleep 0.2; echo late) & echo early'], cwd: process.cwd(), env: { PATH: process.env.PATH ?? '' }, slots: false });
    // The group is killed when the command exits: "late" never comes, and the call did not wait 0.2 s for it.
    expect(result.stdout).toBe('early\n');
    expect(result.exitCode).toBe(0);
  });
});
