import { appendFileSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixtureProject, forge } from '../helpers/project.ts';

describe('forge build (the command)', () => {
  it('prints tools by category, artifacts with sizes and the time taken', async () => {
    const dir = fixtureProject('basic');
    const { code, stdout, stderr } = await forge(['build', '--prod'], dir);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('basic-agent 1.2.3 (prod)');
    expect(stdout).toMatch(/tools\s+6\s+\(builtin 1 · custom 5\)\s+dev tools stripped: dev_probe_py, dev_probe_ts/);
    expect(stdout).toMatch(/runtime\.mjs\s+\d+(\.\d+)? kB/);
    expect(stdout).toMatch(/basic-agent-1\.2\.3\.tgz\s+\d/);
    // A loaded machine may take over a second: then it says "1.08 s".
    expect(stdout).toMatch(/✓ built in \d+(\.\d+)? m?s/);
  });

  it('is a cache hit when nothing changed, and rebuilds when something did', async () => {
    const dir = fixtureProject('basic');
    expect((await forge(['build', '--prod'], dir)).stdout).toContain('✓ built');
    const again = await forge(['build', '--prod'], dir);
    expect(again.stdout).toContain('up to date (cached)');
    expect(again.stdout).toContain('dev tools stripped: dev_probe_py, dev_probe_ts');

    // Touching a file without changing it is still a hit (content is compared).
    const tool = join(dir, 'tools/echo_py.py');
    const later = new Date(Date.now() + 5000);
    utimesSync(tool, later, later);
    expect((await forge(['build', '--prod'], dir)).stdout).toContain('cached');

    appendFileSync(tool, '\n# changed\n');
    expect((await forge(['build', '--prod'], dir)).stdout).toContain('✓ built');

    writeFileSync(join(dir, 'tools/new_tool.py'), '"""\nTool: new_tool\nDescription: d\n"""\n');
    const added = await forge(['build', '--prod'], dir);
    expect(added.stdout).toContain('✓ built');
    expect(added.stdout).toMatch(/custom 6/);

    writeFileSync(join(dir, 'tools/lib/words.ts'), readFileSync(join(dir, 'tools/lib/words.ts'), 'utf8') + '\nexport const extra = 1;\n');
    expect((await forge(['build', '--prod'], dir)).stdout).toContain('✓ built');

    rmSync(join(dir, '.forge-output/Dockerfile'));
    expect((await forge(['build', '--prod'], dir)).stdout).toContain('✓ built');

    expect((await forge(['build', '--prod'], dir)).stdout).toContain('cached');
    expect((await forge(['build', '--prod', '--no-cache'], dir)).stdout).toContain('✓ built');
    expect((await forge(['build'], dir)).stdout).toContain('✓ built');
  });

  it('rebuilds when forge.yaml changes', async () => {
    const dir = fixtureProject('basic');
    await forge(['build'], dir);
    const config = join(dir, 'forge.yaml');
    writeFileSync(config, readFileSync(config, 'utf8').replace('description: The fixture for pipeline and end-to-end tests.', 'description: A changed description.'));
    const { stdout } = await forge(['build'], dir);
    expect(stdout).toContain('✓ built');
    // The new build holds the change, not a cached copy of the old one.
    expect(JSON.parse(readFileSync(join(dir, '.forge-output/agent.json'), 'utf8')).description).toBe('A changed description.');
  });

  it('prints each stage\'s time with --verbose', async () => {
    const dir = fixtureProject('basic');
    const { stdout } = await forge(['build', '--verbose'], dir);
    for (const stage of ['load-config', 'discover-tools', 'parse-docstrings', 'annotate-categories', 'check-schemas', 'filter-tools', 'bundle-runtime', 'emit-manifest', 'emit-archive']) {
      expect(stdout).toMatch(new RegExp(`${stage}\\s+\\d+ ms`));
    }
  });

  it('prints JSON with --json', async () => {
    const dir = fixtureProject('basic');
    const { code, stdout } = await forge(['build', '--prod', '--json'], dir);
    expect(code).toBe(0);
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({ ok: true, cached: false, errors: [], summary: { agentId: 'basic-agent', mode: 'prod' } });
    expect(result.summary.artifacts.map((a: { path: string }) => a.path)).toContain('runtime.mjs');
  });

  it('exits 1 and prints compiler-style diagnostics when the build fails', async () => {
    const dir = fixtureProject('basic');
    writeFileSync(join(dir, 'tools/broken.py'), '"""\nTool: broken\nDescription: d\nInput:\n  x (strng): X.\n"""\n');
    const { code, stdout, stderr } = await forge(['build'], dir);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain('tools/broken.py:5:6 FORGE_DOCSTRING_TYPE unknown type "strng"');
    expect(stderr).toContain('5 │   x (strng): X.');
    expect(stderr).toContain('hint: did you mean "string"?');
    expect(stderr).toContain('build failed with 1 error');
    expect(stderr).not.toMatch(/at \w+ \(/); // no stack trace
  });

  it('returns JSON diagnostics with --json when the build fails', async () => {
    const dir = fixtureProject('basic');
    writeFileSync(join(dir, 'forge.yaml'), 'agent_id: x\nversion: 1.0.0\nmodle: {}\n');
    const { code, stdout } = await forge(['build', '--json'], dir);
    expect(code).toBe(1);
    expect(JSON.parse(stdout).errors).toEqual([
      { severity: 'error', code: 'FORGE_CONFIG_UNKNOWN_FIELD', message: 'unknown field "modle"', file: 'forge.yaml', line: 3, column: 1, hint: 'did you mean "model"?', location: { file: 'forge.yaml', line: 3, column: 1, lineText: 'modle: {}' } },
    ]);
  });
});
