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
import { COMMON_OPTIONS, parseCommand, type OptionSpec } from './args.ts';
import { BUILD_OPTIONS, buildRequest, cachedBuild, reportBuild } from './cached-build.ts';
import { codeCacheVariant } from './command-names.ts';
import { loadWithCodeCache } from '../runtime/code-cache.ts';
import { guardRegExpBacktracking } from '../runtime/regexp-safety.ts';
import { ownValue } from '../runtime/own-value.ts';
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
  const values = knownSwitches(argv, BUILD_OPTIONS) ?? parseCommand(argv, BUILD_OPTIONS).values;
  const cwd = process.cwd();
  const cached = cachedBuild(buildRequest(values, cwd));
  if (!cached || !('result' in cached)) return undefined;
  reportBuild(cached.result, values.json, cwd, Number(process.hrtime.bigint() - started) / 1e6, values.verbose, writeStdoutSync);
  return 0;
}

/**
 * The values parseCommand gives a command line made only of long boolean
 * options the command knows (`build --prod`), read without node:util's
 * parseArgs, whose first use costs a cached build a millisecond; undefined
 * for anything else (a value, a short option, a positional), which
 * parseCommand reads and reports.
 */
function knownSwitches<T extends OptionSpec>(argv: readonly string[], options: T): ReturnType<typeof parseCommand<T>>['values'] | undefined {
  const all: OptionSpec = { ...COMMON_OPTIONS, ...options };
  const values: Record<string, boolean | string | undefined> = {};
  for (const [name, option] of Object.entries(all)) if (option.default !== undefined) values[name] = option.default as boolean | string;
  for (const arg of argv) {
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    if (!name || ownValue(all, name)?.type !== 'boolean') return undefined;
    values[name] = true;
  }
  return values as ReturnType<typeof parseCommand<T>>['values'];
}

function answerVersion(argv: string[]): number {
  const values = knownSwitches(argv, {}) ?? parseCommand(argv, {}).values;
  printVersion(values.json, writeStdoutSync);
  return 0;
}

/**
 * The compiled CLI beside this file (dist/forge-cli.cjs), run for `argv` with V8's code cache of
 * that command (command-names.ts); a missing one is written as the process exits.
 */
export function runCompiledCli(argv: readonly string[]): void {
  // Before the code cache is read: V8 refuses compiled code cached under other flags, and the CLI sets this
  // one (regexp-safety.ts) before it runs any agent's schema. Not in the answers above: node:v8 brings streams.
  guardRegExpBacktracking();
  const cli = loadWithCodeCache(join(dirname(fileURLToPath(import.meta.url)), 'forge-cli.cjs'), join(defaultCacheDir(), 'code-cache'), forgeVersion(), codeCacheVariant(argv));
  // Not after a usage error (exit 2): that run stopped before the command's work, and its cache would keep the
  // command's next runs from writing one that holds it.
  process.once('exit', (code) => {
    if (code !== 2) cli.save();
  });
}
