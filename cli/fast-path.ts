/**
 * The commands that must feel instant — a build with nothing changed and
 * `forge --version` — answered from one small CommonJS file
 * (dist/forge-fast.cjs, which bin/forge.cjs loads first). Loading the
 * compiled CLI (dist/forge-cli.cjs, three megabytes) costs more than these
 * answers themselves. Anything else (a stale cache, --help, a usage error)
 * returns undefined and the full CLI runs (`runCompiledCli`, with V8's code
 * cache), which decides again and prints what it always prints.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultCacheDir, forgeVersion } from '../stages/forge-paths.ts';
import { parseCommand } from './args.ts';
import { BUILD_OPTIONS, buildRequest, cachedBuild, reportBuild } from './cached-build.ts';
import { loadWithCodeCache } from './code-cache.ts';
import { printVersion } from './commands/version.ts';
import { writeStdoutSync } from './stdio.ts';

/** The exit code, if this command was answered here. */
export function answer(argv: readonly string[]): number | undefined {
  const [name, ...rest] = argv;
  if (rest.includes('--help') || rest.includes('-h')) return undefined;
  try {
    if (name === 'build') return answerCachedBuild(rest);
    if (name === 'version' || name === '--version') return answerVersion(rest);
  } catch {
    // A usage error or anything unexpected: the full CLI says it properly.
  }
  return undefined;
}

function answerCachedBuild(argv: string[]): number | undefined {
  // Not performance.now(): the first read of `performance` loads perf_hooks.
  const started = process.hrtime.bigint();
  const { values } = parseCommand(argv, BUILD_OPTIONS);
  const cwd = process.cwd();
  const cached = cachedBuild(buildRequest(values, cwd));
  if (!cached || !('result' in cached)) return undefined;
  reportBuild(cached.result, values.json, cwd, Number(process.hrtime.bigint() - started) / 1e6, values.verbose, writeStdoutSync);
  return 0;
}

function answerVersion(argv: string[]): number {
  const { values } = parseCommand(argv, {});
  printVersion(values.json, writeStdoutSync);
  return 0;
}

/** The compiled CLI beside this file (dist/forge-cli.cjs), run with V8's code cache; a new cache is written as the process exits. */
export function runCompiledCli(): void {
  const cli = loadWithCodeCache(join(dirname(fileURLToPath(import.meta.url)), 'forge-cli.cjs'), join(defaultCacheDir(), 'code-cache'), forgeVersion());
  process.once('exit', () => cli.save());
}
