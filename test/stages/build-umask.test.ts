/**
 * A build under a strict umask (077) still writes files 0644 (0755 when
 * executable) and directories 0755: the Dockerfile copies them and runs as
 * USER node, who could not read 0600 files. The archive and checksums do not
 * depend on the umask. The Dockerfile's own repair (find ... chmod a+rX) is
 * run here on real files too.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forgeBin, minimalConfig, runProcess, tempDir, writeProject } from '../helpers/project.ts';

function buildUnderUmask(project: string, umask: string, out: string) {
  // The umask is the child's own, set by the shell that execs node.
  return runProcess('sh', ['-c', `umask ${umask}; exec "$0" "$1" build --prod --no-cache --out "$2"`, process.execPath, forgeBin, out], { cwd: project, env: { ...process.env, SOURCE_DATE_EPOCH: '1700000000' } });
}

/** Every file and directory under `dir` with its permission bits, by relative path. */
function modes(dir: string): Record<string, number> {
  const out: Record<string, number> = { '.': statSync(dir).mode & 0o777 };
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    out[relative(dir, path)] = statSync(path).mode & 0o777;
  }
  return out;
}

describe('forge build under umask 077', () => {
  it('writes files 0644 or 0755 and directories 0755, with the same archive and checksums as under 022', async () => {
    const project = writeProject({
      'forge.yaml': minimalConfig('tools:\n  - name: math_calculate\n'),
      'tools/greet.py': '"""\nTool: greet\nDescription: Says hello.\n\nInput:\n  name (str): Who.\n"""\n\ndef execute(name: str) -> str:\n    return f"hello {name}"\n',
    });
    const strict = join(tempDir(), 'strict');
    const usual = join(tempDir(), 'usual');
    const built = await buildUnderUmask(project, '077', strict);
    expect(built.code, built.stderr).toBe(0);
    const again = await buildUnderUmask(project, '022', usual);
    expect(again.code, again.stderr).toBe(0);

    const found = modes(strict);
    expect(Object.keys(found).length).toBeGreaterThan(10);
    for (const [path, mode] of Object.entries(found)) {
      const allowed = statSync(join(strict, path)).isDirectory() ? ['755'] : ['644', '755'];
      expect(allowed, `${path} is ${mode.toString(8)}`).toContain(mode.toString(8));
    }
    expect(found['k8s']).toBe(0o755);
    expect(found['tools/greet.py']).toBe(0o644);
    expect(found).toEqual(modes(usual));

    const archive = readdirSync(strict).find((f) => f.endsWith('.tgz'))!;
    expect(readFileSync(join(strict, archive)).equals(readFileSync(join(usual, archive)))).toBe(true);
    expect(readFileSync(join(strict, 'checksums.json'), 'utf8')).toBe(readFileSync(join(usual, 'checksums.json'), 'utf8'));
  }, 120_000);

  it('the Dockerfile makes a bundle copied with 0600/0700 modes readable, touching nothing else', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig() });
    const out = join(tempDir(), 'out');
    expect((await buildUnderUmask(project, '022', out)).code).toBe(0);
    const dockerfile = readFileSync(join(out, 'Dockerfile'), 'utf8');
    const find = /&& (find \/opt\/agent .*\+) \\$/m.exec(dockerfile)?.[1];
    expect(find).toBeDefined();

    const agent = join(tempDir(), 'opt-agent');
    mkdirSync(join(agent, 'tools', 'deep'), { recursive: true });
    writeFileSync(join(agent, 'runtime.mjs'), 'x');
    writeFileSync(join(agent, 'tools', 'deep', 'run.sh'), 'x');
    writeFileSync(join(agent, 'agent.json'), '{}');
    chmodSync(join(agent, 'runtime.mjs'), 0o600);
    chmodSync(join(agent, 'tools', 'deep', 'run.sh'), 0o700);
    chmodSync(join(agent, 'agent.json'), 0o644);
    chmodSync(join(agent, 'tools', 'deep'), 0o700);
    chmodSync(join(agent, 'tools'), 0o700);
    const untouched = statSync(join(agent, 'agent.json')).ctimeMs;
    const chmodded = statSync(join(agent, 'runtime.mjs')).ctimeMs;
    await new Promise((r) => setTimeout(r, 20));
    const ran = await runProcess('sh', ['-c', find!.replace('/opt/agent', '"$0"'), agent], { cwd: agent });
    expect(ran.code, ran.stderr).toBe(0);
    expect(modes(agent)).toEqual({ '.': 0o755, 'runtime.mjs': 0o644, tools: 0o755, 'tools/deep': 0o755, 'tools/deep/run.sh': 0o755, 'agent.json': 0o644 });
    // A file that was already readable is not chmodded: the image layer does not copy it up. The control
    // (a file the find does chmod) shows this file system's ctime can tell.
    expect(statSync(join(agent, 'runtime.mjs')).ctimeMs).not.toBe(chmodded);
    expect(statSync(join(agent, 'agent.json')).ctimeMs).toBe(untouched);
  }, 120_000);
});
