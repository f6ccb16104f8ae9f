/**
 * Runs a command on a real pseudo-terminal (through Python's pty module), so
 * a program sees a person at a terminal: it answers each confirmation prompt
 * with the next of `answers` and returns everything the terminal showed.
 */
import { runProcess, type ProcessResult } from './project.ts';

const DRIVER = String.raw`
import json, os, pty, select, sys
spec = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.chdir(spec["cwd"])
    os.execvpe(spec["argv"][0], spec["argv"], dict(os.environ, **spec["env"]))
out = b""
answered = 0
prompt = spec["prompt"].encode()
while True:
    ready, _, _ = select.select([fd], [], [], 30)
    if not ready:
        break
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    out += data
    while out.count(prompt) > answered:
        answer = spec["answers"][answered] if answered < len(spec["answers"]) else "n"
        os.write(fd, (answer + "\n").encode())
        answered += 1
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace"))
sys.exit(os.waitstatus_to_exitcode(status))
`;

export function runOnTerminal(argv: string[], options: { cwd: string; env?: Record<string, string>; answers: string[]; prompt?: string }): Promise<ProcessResult> {
  const spec = { argv, cwd: options.cwd, env: { NO_COLOR: '1', ...options.env }, answers: options.answers, prompt: options.prompt ?? 'run it? [y/N]' };
  return runProcess('python3', ['-c', DRIVER, JSON.stringify(spec)], { cwd: options.cwd });
}
