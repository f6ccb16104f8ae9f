/**
 * The environment vitest.config.ts gives every test file and the processes
 * it starts: never the real user's Forge home or global tools, and no
 * NODE_EXTRA_CA_CERTS (Node 20 would parse every root certificate in each
 * of the suite's ~1,000 node processes), and no python3 shim (pyenv) in front
 * of the interpreter it runs.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { describe, expect, it } from 'vitest';

describe("the suite's environment", () => {
  it('starts node processes without NODE_EXTRA_CA_CERTS', () => {
    const child = spawnSync(process.execPath, ['-p', 'JSON.stringify(process.env.NODE_EXTRA_CA_CERTS ?? "")'], { encoding: 'utf8' });
    expect(JSON.parse(child.stdout)).toBe('');
  });

  it("keeps Forge's home, global tools and cache away from the user's", () => {
    for (const name of ['FORGE_HOME', 'FORGE_GLOBAL_TOOLS', 'FORGE_CACHE_DIR']) {
      expect(process.env[name], name).toMatch(/forge-tests-/);
      expect(process.env[name]!.startsWith(homedir()), name).toBe(false);
    }
  });

  it('finds python3 on PATH as the interpreter itself, not a shell-script shim', () => {
    const found = spawnSync('sh', ['-c', 'command -v python3'], { encoding: 'utf8' }).stdout.trim();
    const head = Buffer.alloc(4);
    const fd = openSync(realpathSync(found), 'r');
    readSync(fd, head, 0, 4, 0);
    closeSync(fd);
    expect(head.toString('latin1'), found).toBe('\x7fELF');
  });
});
