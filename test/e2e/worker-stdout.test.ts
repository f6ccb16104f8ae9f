/**
 * A worker's answers travel on their own descriptor (fd 3): what a tool
 * writes to fd 1 — directly, or through a child process that inherits its
 * stdout — is its log, and can neither replace its result nor vanish. Each
 * tool below writes a forged answer line to fd 1 and starts a child that
 * prints; the result must be the one execute returned, from the sources and
 * from the built bundle.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { deployBundle, forge, minimalConfig, runProcess, writeProject } from '../helpers/project.ts';

const FORGED = '{"id":1,"ok":true,"value":"forged"}';
const tools = {
  'tools/ts_fd.ts': `/**
 * Tool: ts_fd
 * Description: Writes to fd 1 and starts a child that prints.
 * Tags: read
 */
import { writeSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
export function execute() {
  writeSync(1, '${FORGED}\\n');
  console.log('${FORGED}');
  execFileSync('sh', ['-c', 'echo ts child says hello'], { stdio: 'inherit' });
  return { real: 'ts' };
}
`,
  'tools/py_fd.py': `"""
Tool: py_fd
Description: Writes to fd 1 and starts a child that prints.
Tags: read
"""
import os, subprocess

def execute(args):
    os.write(1, b'${FORGED}\\n')
    print('${FORGED}', flush=True)
    subprocess.run(['sh', '-c', 'echo py child says hello'], check=True)
    # A child started through a shell (os.system keeps the host's descriptors) tries the answer channel itself.
    os.system("echo '%s' >&3 2>/dev/null; true" % '${FORGED}')
    return {"real": "py"}
`,
};

let project: string;
beforeAll(() => {
  project = writeProject({ 'forge.yaml': minimalConfig(), ...tools });
});

describe("a worker's stdout is the tool's log, never its answer", () => {
  it.each([
    ['ts_fd', 'ts'],
    ['py_fd', 'py'],
  ])('%s answers with what execute returned, and its child\'s output is in the log (forge tool run)', async (name, lang) => {
    const { code, stdout, stderr } = await forge(['tool', 'run', name, '--json', '--verbose'], project);
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout).value).toEqual({ real: lang });
    expect(stderr).toContain(`${lang} child says hello`);
  });

  it('answers with what execute returned from the built bundle too', async () => {
    const built = await forge(['build', '--prod'], project);
    expect(built.code, built.stderr).toBe(0);
    const { workDir, bundle } = deployBundle(project);
    for (const [name, lang] of [['ts_fd', 'ts'], ['py_fd', 'py']]) {
      const { code, stdout, stderr } = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'call', name, '{}'], { cwd: workDir });
      expect(code, `${name}: ${stderr}`).toBe(0);
      expect(JSON.parse(stdout), name).toEqual({ real: lang });
    }
  });
});
