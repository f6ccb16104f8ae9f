/**
 * Installing Forge outside its clone: `npm pack`'s tarball installed with
 * `npm install -g` into an empty prefix, then `forge init` and `forge build`
 * in a new directory with nothing else around. The command is `forge`; the
 * package has a name of its own on the registry.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, runProcess, tempDir } from '../helpers/project.ts';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string>; private?: boolean };

describe('installing Forge from a packed tarball', () => {
  it('is named apart from the registry package "forge" and still installs the command forge', () => {
    expect(pkg.name).not.toBe('forge');
    expect(Object.keys(pkg.bin)).toEqual(['forge']);
  });

  it('installs into an empty prefix; forge init and forge build work in a new directory; $schema points at no local install', async () => {
    // dist/ is already compiled (test/global-setup.ts); its prepare script would delete it under the other tests' feet.
    const packDir = tempDir('forge-pack-');
    const packed = await runProcess(npm, ['pack', '--pack-destination', packDir, '--silent', '--ignore-scripts'], { cwd: repoRoot });
    expect(packed.code, packed.stderr).toBe(0);
    const tarball = join(packDir, `${pkg.name}-${pkg.version}.tgz`);
    expect(existsSync(tarball)).toBe(true);

    const prefix = tempDir('forge-prefix-');
    // From an empty directory, so nothing of the clone is on the way.
    const installed = await runProcess(npm, ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: tempDir('forge-empty-') });
    expect(installed.code, installed.stderr).toBe(0);
    const forge = join(prefix, 'bin', 'forge');
    expect(existsSync(forge)).toBe(true);

    const parent = tempDir('forge-new-');
    const init = await runProcess(forge, ['init', 'demo'], { cwd: parent });
    expect(init.code, init.stderr).toBe(0);
    const project = join(parent, 'demo');
    const config = readFileSync(join(project, 'forge.yaml'), 'utf8');
    expect(config).toContain(`$schema=https://unpkg.com/${pkg.name}@${pkg.version}/schemas/forge.schema.json`);
    expect(config).not.toContain(prefix);

    const built = await runProcess(forge, ['build', '--prod'], { cwd: project });
    expect(built.code, built.stderr).toBe(0);
    const listed = await runProcess(process.execPath, [join(project, '.forge-output/runtime.mjs'), 'tools'], { cwd: join(project, '.forge-output') });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('greet');
  }, 300_000);
});
