/**
 * Where Forge itself is installed. The build bundles runtime/ from here and
 * renders templates/ from here. This file sits one level below the root
 * both as source (stages/) and compiled (dist/), so one URL works for both.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Compiled to CommonJS (dist/), the module knows its directory without parsing a URL, which is
// half a millisecond of a cached build's few; as ES module source, import.meta.url tells.
export const forgeRoot = typeof __dirname === 'string' ? dirname(__dirname) : fileURLToPath(new URL('..', import.meta.url));
export const runtimeDir = join(forgeRoot, 'runtime');
export const templatesDir = join(forgeRoot, 'templates');

let pkg: { name: string; version: string } | undefined;
function forgePackage(): { name: string; version: string } {
  pkg ??= JSON.parse(readFileSync(join(forgeRoot, 'package.json'), 'utf8')) as { name: string; version: string };
  return pkg;
}

export function forgeVersion(): string {
  return forgePackage().version;
}

/** The npm package Forge is published as (the command is `forge`; the name `forge` is someone else's). */
export function forgePackageName(): string {
  return forgePackage().name;
}

/** Forge's machine-wide cache (base image blobs, runtime cores): FORGE_CACHE_DIR, else $XDG_CACHE_HOME/forge, else ~/.cache/forge. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FORGE_CACHE_DIR) return env.FORGE_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(homeDirectory(), '.cache'), 'forge');
}

/**
 * os.homedir() without loading node:os where HOME answers: off Windows, os.homedir() is $HOME when
 * set (libuv asks the environment first), and a cached build asks here for the default cache
 * directory (forgeDirProblems), where loading node:os and node:module cost most of a millisecond.
 */
function homeDirectory(): string {
  if (process.platform !== 'win32' && process.env.HOME) return process.env.HOME;
  return (createRequire(forgeRoot + '/')('node:os') as typeof import('node:os')).homedir();
}
