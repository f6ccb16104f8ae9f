/** The container a build describes: which Node.js line and base image, pinned when forge.yaml pins it. */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CODE_CACHE_DIR } from '../../runtime/core-loader.ts';
import { build } from '../../stages/pipeline.ts';
import { minimalConfig, writeProject } from '../helpers/project.ts';

async function buildWith(extra: string) {
  const dir = writeProject({ 'forge.yaml': minimalConfig(extra) });
  const result = await build({ cwd: dir, prod: true });
  expect(result.errors).toEqual([]);
  const out = join(dir, '.forge-output');
  return {
    out,
    dockerfile: readFileSync(join(out, 'Dockerfile'), 'utf8'),
    dockerignore: readFileSync(join(out, '.dockerignore'), 'utf8'),
    agent: JSON.parse(readFileSync(join(out, 'agent.json'), 'utf8')),
    buildManifest: JSON.parse(readFileSync(join(out, 'build-manifest.json'), 'utf8')),
  };
}

describe('the generated Dockerfile', () => {
  it('runs on the active LTS line by default, with the compile cache written at image build', async () => {
    const { dockerfile, agent, buildManifest } = await buildWith('');
    expect(dockerfile).toMatch(/^FROM node:24-bookworm-slim$/m);
    expect(dockerfile).not.toMatch(/node:20/);
    expect(dockerfile).toContain('NODE_COMPILE_CACHE=/opt/agent/.node-compile-cache');
    expect(dockerfile).toMatch(/^RUN node \/opt\/agent\/runtime\.mjs __warm > \/dev\/null/m);
    expect(agent.runtime).toEqual({ node: 24, image: 'node:24-bookworm-slim' });
    expect(buildManifest.base_image).toEqual({ ref: 'node:24-bookworm-slim' });
  });

  it("writes the runtime core's code cache with that step, from its own Node, not the one of the machine that built it", async () => {
    const { out, dockerignore } = await buildWith('');
    // What the Dockerfile's `RUN node /opt/agent/runtime.mjs __warm` (checked above) does, here: the core's cache appears beside it,
    // with the A2A SDK's the protocol endpoints load (core-loader.test.ts checks what a serve makes of them).
    execFileSync(process.execPath, [join(out, 'runtime.mjs'), '__warm'], { stdio: 'ignore' });
    expect(readdirSync(join(out, CODE_CACHE_DIR)).map((name) => name.split('-')[0]).sort()).toEqual(expect.arrayContaining(['a2a.cjs', 'forge']));
    // And what a run on the building machine left there stays out of the image's context.
    expect(dockerignore.split('\n')).toContain(`${CODE_CACHE_DIR}/`);
  });

  it('follows forge.yaml’s runtime.node', async () => {
    const { dockerfile, agent } = await buildWith('runtime: { node: 22 }\n');
    expect(dockerfile).toMatch(/^FROM node:22-bookworm-slim$/m);
    expect(dockerfile).toContain('end of life 2027-04-30');
    expect(agent.runtime.node).toBe(22);
  });

  it('records the digest of a pinned base image in the build manifest', async () => {
    const digest = 'sha256:' + 'ab'.repeat(32);
    const { dockerfile, buildManifest } = await buildWith(`runtime: { node: 26, image: "node:26-bookworm-slim@${digest}" }\n`);
    expect(dockerfile).toContain(`FROM node:26-bookworm-slim@${digest}`);
    expect(buildManifest.base_image).toEqual({ ref: 'node:26-bookworm-slim', digest });
  });

  it('refuses a Node.js line Forge does not support, at its place in forge.yaml', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('runtime: { node: 18 }\n') });
    const result = await build({ cwd: dir, prod: true });
    expect(result.ok).toBe(false);
    expect(result.errors[0]).toMatchObject({ file: 'forge.yaml', line: expect.any(Number) });
    expect(result.errors[0].message).toMatch(/20, 22, 24, 26|allowed/);
  });
});
