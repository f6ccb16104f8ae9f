// The official Node.js binary of one release line, from the npm registry's
// node-<platform>-<arch> package, installed once into a cache outside the
// project. Shared by `npm run test:node-lines` and `npm run bench:node-lines`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const nodeLineCache = process.env.FORGE_NODE_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'forge', 'node-lines');

export function nodeLineBinary(line) {
  const packageName = `node-${process.platform}-${process.arch}`;
  const prefix = join(nodeLineCache, String(line));
  const binary = join(prefix, 'node_modules', packageName, 'bin', 'node');
  if (!existsSync(binary)) {
    mkdirSync(prefix, { recursive: true });
    console.log(`installing ${packageName}@${line} into ${prefix}`);
    const npm = spawnSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', `${packageName}@${line}`], { stdio: 'inherit' });
    if (npm.status !== 0 || !existsSync(binary)) throw new Error(`could not install ${packageName}@${line} from the npm registry`);
  }
  return binary;
}
