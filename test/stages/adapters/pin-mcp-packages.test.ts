/**
 * stdio MCP servers started with npx: the build pins the package's exact
 * version into agent.json, the Dockerfile installs it, the bundle starts the
 * installed package with node (no npx, no network), and a server that fails
 * to start shows its own stderr with a hint in the bundle's terms.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseNpxArgs, splitSpec } from '../../../stages/adapters/pin-mcp-packages.ts';
import { FILESYSTEM_PACKAGE, filesystemVersion, npxMcpProject } from '../../helpers/npx-project.ts';
import { deployBundle, forge, minimalConfig, repoRoot, runProcess, writeProject } from '../../helpers/project.ts';

describe('reading an npx command', () => {
  it.each([
    [['-y', 'pkg'], { spec: 'pkg', args: [] }],
    [['--yes', '@scope/pkg@^1.2', 'a', '-b'], { spec: '@scope/pkg@^1.2', args: ['a', '-b'] }],
    [['--', 'pkg@1.0.0', '--port', '1'], { spec: 'pkg@1.0.0', args: ['--port', '1'] }],
    [['-p', 'pkg', 'bin'], undefined],
    [['./local/server.js'], undefined],
    [['github:user/repo'], undefined],
  ])('%j', (args, expected) => {
    expect(parseNpxArgs(args)).toEqual(expected);
  });

  it.each([
    ['pkg', { name: 'pkg', range: '*' }],
    ['pkg@^2', { name: 'pkg', range: '^2' }],
    ['@scope/pkg', { name: '@scope/pkg', range: '*' }],
    ['@scope/pkg@1.0.0', { name: '@scope/pkg', range: '1.0.0' }],
  ])('splits %s', (spec, expected) => {
    expect(splitSpec(spec)).toEqual(expected);
  });
});

describe('forge build with an npx MCP server', () => {
  it('pins the exact version and the bin in agent.json, and the Dockerfile installs it', async () => {
    const dir = npxMcpProject();
    const built = await forge(['build', '--prod'], dir);
    expect(built.code, built.stderr).toBe(0);
    const agent = JSON.parse(readFileSync(join(dir, '.forge-output', 'agent.json'), 'utf8'));
    expect(agent.mcp.servers[0].package).toEqual({ name: FILESYSTEM_PACKAGE, version: filesystemVersion(), bin: 'dist/index.js', args: ['.'] });
    const dockerfile = readFileSync(join(dir, '.forge-output', 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain(`RUN npm install -g --omit=dev --no-fund --no-audit ${FILESYSTEM_PACKAGE}@${filesystemVersion()}`);
    expect(dockerfile).toContain('ENV FORGE_MCP_PACKAGES=/usr/local/lib/node_modules');
  }, 120_000);

  it('the bundle starts the installed package with node when FORGE_MCP_PACKAGES has it, without npx on PATH', async () => {
    const dir = npxMcpProject();
    expect((await forge(['build', '--prod'], dir)).code).toBe(0);
    const { workDir, bundle } = deployBundle(dir);
    const env = { FORGE_MCP_PACKAGES: join(repoRoot, 'node_modules'), PATH: '/nonexistent' };
    const { code, stdout, stderr } = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'call', 'fs__list_allowed_directories', '{}'], { cwd: workDir, env });
    expect(code, stderr).toBe(0);
    expect(stdout).toContain(workDir);
  }, 120_000);

  it('a server that fails at start shows its stderr, and the hint names the bundle\'s commands', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig(`mcp:\n  servers:\n    - name: broken\n      transport: stdio\n      command: ${JSON.stringify(process.execPath)}\n      args: ["server.js"]\n      cwd: .\n`),
      // Built against a working server; broken in the deployed bundle below.
      'server.js': `process.argv.push('.');\nimport(${JSON.stringify(join(repoRoot, 'node_modules', FILESYSTEM_PACKAGE, 'dist', 'index.js'))});\n`,
    });
    const built = await forge(['build', '--prod'], dir);
    expect(built.code, built.stderr).toBe(0);
    const { workDir, bundle } = deployBundle(dir);
    writeFileSync(join(workDir, 'server.js'), 'process.stderr.write("boom: cannot reach registry.npmjs.org\\n"); process.exit(3);\n');
    const { code, stderr } = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'call', 'broken__list_allowed_directories', '{}'], { cwd: workDir });
    expect(code).toBe(1);
    expect(stderr).toContain('boom: cannot reach registry.npmjs.org');
    expect(stderr).toContain('node runtime.mjs tools');
    expect(stderr).not.toContain('forge mcp test');
  }, 120_000);
});
