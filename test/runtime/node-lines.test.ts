import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { defaultBaseImage, DEFAULT_NODE_LINE, nodeLineWarning, permissionFlag, SUPPORTED_NODE_LINES } from '../../runtime/node-lines.ts';

const after20Eol = new Date('2026-11-23T00:00:00Z');

describe('nodeLineWarning', () => {
  it('warns once that Node 20 is past end of life, naming the lines to move to', () => {
    const warning = nodeLineWarning('20.20.2', after20Eol);
    expect(warning).toMatch(/Node\.js 20 reached end of life on 2026-04-30/);
    expect(warning).toContain('22, 24, 26');
  });

  it.each(['22.23.3', '24.21.0', '26.10.0'])('says nothing on the supported line %s', (version) => {
    expect(nodeLineWarning(version, after20Eol)).toBeUndefined();
  });

  it('says nothing on Node 20 before its end of life', () => {
    expect(nodeLineWarning('20.19.0', new Date('2026-01-15T00:00:00Z'))).toBeUndefined();
  });

  it.each(['18.20.0', '21.7.3', '25.1.0'])('names %s as a line Forge does not support', (version) => {
    expect(nodeLineWarning(version, after20Eol)).toMatch(/not a line Forge supports/);
  });
});

describe('permissionFlag', () => {
  it.each([
    ['20.20.2', '--experimental-permission'],
    ['22.12.0', '--experimental-permission'],
    ['22.13.0', '--permission'],
    ['24.0.0', '--permission'],
    ['26.10.0', '--permission'],
  ])('on %s is %s', (version, flag) => {
    expect(permissionFlag(version)).toBe(flag);
  });

  it('is a flag the Node.js running this test accepts, and it turns the permission model on', () => {
    // Run on every supported line by `npm run test:node-lines`: the table above must match the real binaries.
    const result = spawnSync(process.execPath, [permissionFlag(), '-e', 'process.stdout.write(String(process.permission.has("fs.write", "/tmp")))'], { encoding: 'utf8' });
    expect(result.stderr).not.toMatch(/bad option/);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('false');
  });
});

describe('the default container base', () => {
  it('is the active LTS line, one of the supported lines', () => {
    expect(SUPPORTED_NODE_LINES).toContain(DEFAULT_NODE_LINE);
    expect(DEFAULT_NODE_LINE).toBe(24);
    expect(defaultBaseImage()).toBe('node:24-bookworm-slim');
  });
});
