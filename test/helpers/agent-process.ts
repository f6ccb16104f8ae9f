/** A running agent process (`node runtime.mjs serve`, `forge run`), with its URL once it listens. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { onFileEnd } from './file-cleanup.ts';

export interface AgentProcess {
  url: string;
  child: ChildProcessWithoutNullStreams;
  output(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves when the output contains `text` (or rejects after `ms`). */
  waitFor(text: string | RegExp, ms?: number): Promise<void>;
}

const started: ChildProcessWithoutNullStreams[] = [];
onFileEnd(() => {
  for (const child of started.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** `uid`/`gid`: run it as another user (the test runs as root; so does the CI). */
/** `onOutput`: told the output so far each time it grows, before the process listens too. */
export function startAgentProcess(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; ready?: RegExp; uid?: number; gid?: number; onOutput?: (output: string) => void }): Promise<AgentProcess> {
  const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, NO_COLOR: '1', ...options.env }, stdio: ['pipe', 'pipe', 'pipe'], uid: options.uid, gid: options.gid });
  started.push(child);
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (d: Buffer) => {
    output += d.toString();
    options.onOutput?.(output);
    for (const l of listeners) l();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const waitFor = (text: string | RegExp, ms = 15_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (typeof text === 'string' ? output.includes(text) : text.test(output)) {
          listeners.delete(check);
          clearTimeout(timer);
          resolve();
        }
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`timed out waiting for ${text}; output so far:\n${output}`));
      }, ms);
      listeners.add(check);
      check();
    });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const ready = options.ready ?? /(?:listening on|on) (http:\/\/[^\s)]+)/;
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`exited with ${code} before listening:\n${output}`)));
    waitFor(ready).then(() => {
      resolve({
        url: ready.exec(output)![1],
        child,
        output: () => output,
        stop: (signal = 'SIGTERM') => {
          if (child.exitCode === null) child.kill(signal);
          return exited;
        },
        waitFor,
      });
    }, reject);
  });
}
