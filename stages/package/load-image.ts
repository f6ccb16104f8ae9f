/**
 * Output: --load into a local docker or podman (whichever is on PATH and
 * answers), from the OCI archive. Without either, a clear message, before
 * the build, the base image and pip have taken their time.
 */
import { spawn, spawnSync } from 'node:child_process';
import { ForgeError } from '../../runtime/diagnostics.ts';

export interface LoadReport {
  engine: string;
  output: string;
}

export function findEngine(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const engine of ['docker', 'podman']) {
    const probe = spawnSync(engine, ['info', '--format', '{{.ServerVersion}}'], { env, encoding: 'utf8', timeout: 20_000 });
    if (probe.status === 0) return engine;
  }
  return undefined;
}

/** The engine --load will use; asked before anything is built or pulled, so a missing one is said first. */
export function requireEngine(env: NodeJS.ProcessEnv = process.env): string {
  const engine = findEngine(env);
  if (!engine) throw new ForgeError('FORGE_PACKAGE_LOAD', '--load needs a running docker or podman (neither answered)', 'start one, or use --out image.tar or --push REGISTRY/REPO:TAG instead');
  return engine;
}

export async function loadImage(archive: Buffer, tag: string, engine: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadReport> {
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(engine, ['load'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(text) : reject(new ForgeError('FORGE_PACKAGE_LOAD', `${engine} load failed: ${text.trim()}`, 'use --out image.tar and load it yourself, or --push REGISTRY/REPO:TAG'))));
    child.stdin.end(archive);
  });
  // An OCI archive loads under its digest (or its ref name); tag it so `docker run TAG` works.
  const loaded = /Loaded image(?: ID)?: (\S+)/.exec(output)?.[1];
  if (loaded && loaded !== tag) spawnSync(engine, ['tag', loaded, tag], { env });
  return { engine, output: output.trim() };
}
