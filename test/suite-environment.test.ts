/**
 * The environment vitest.config.ts gives every test file and the processes
 * it starts: never the real user's Forge home or global tools, and no
 * NODE_EXTRA_CA_CERTS (Node 20 would parse every root certificate in each
 * of the suite's ~1,000 node processes).
 */
import { spawnSync } from 'node:child_process';
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
});
