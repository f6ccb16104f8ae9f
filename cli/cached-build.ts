/**
 * The no-op build: when nothing changed since the last build, `forge build`
 * reports that build's summary and does nothing else. Decided from file
 * stats alone and printed by code that loads none of the pipeline, so the
 * command's fast path (fast-path.ts) can answer from here.
 */
import { dirname, resolve } from 'node:path';
import { cacheFile, cacheKey, readCacheRecord, staleReason } from '../stages/build-cache.ts';
import { locateConfig } from '../stages/config/find-config.ts';
import type { BuildResult, BuildSummary } from '../stages/pipeline.ts';
import { renderSummary, renderTimings } from './build-summary.ts';
import { diagnosticsJson, failureJson, jsonDocument } from '../runtime/failure-json.ts';
import { printDiagnostics } from './diagnostics-output.ts';
import { forgeDirProblems } from '../stages/forge-env-dirs.ts';
import { color as c, formatMs } from './terminal.ts';

/** `forge build`'s own options (parseCommand adds the common ones). */
export const BUILD_OPTIONS = {
  prod: { type: 'boolean', default: false },
  out: { type: 'string' },
  'no-cache': { type: 'boolean', default: false },
  offline: { type: 'boolean', default: false },
  sign: { type: 'string' },
} as const;

export interface BuildRequest {
  cwd: string;
  configFile?: string;
  prod: boolean;
  outDir?: string;
  offline?: boolean;
  signKey?: string;
  noCache?: boolean;
  /** Say on stderr why the cache was not used. */
  verbose?: boolean;
}

/** The last build, if it stands for this one; otherwise why not (undefined: no cache applies). */
export function cachedBuild(request: BuildRequest): { result: BuildResult } | { stale: string } | undefined {
  const configFile = locateConfig({ configFile: request.configFile }, request.cwd);
  // A signed build always runs: the key is an input the cache does not stamp.
  if (!configFile || request.noCache || request.signKey) return undefined;
  const root = dirname(configFile);
  const outDir = resolve(root, request.outDir ?? '.forge-output');
  const key = cacheKey(configFile, outDir, request.prod);
  const record = readCacheRecord<BuildSummary>(cacheFile(root, key));
  const stale = !record
    ? 'no previous build'
    : record.live?.length && !request.offline
      ? `${record.live.join(', ')} ${record.live.length === 1 ? 'is' : 'are'} asked on every build (--offline reuses the last answer)`
      : staleReason(record, key);
  if (record && !stale) return { result: { ok: true, cached: true, errors: [], warnings: record.warnings ?? [], summary: record.summary, timings: [] } };
  return { stale: stale as string };
}

/** Prints a build's result: diagnostics, then the summary (or the failure), or all of it as JSON. */
export function reportBuild(built: BuildResult, json: boolean, cwd: string, ms: number, verbose: boolean, write: (text: string) => void = (text) => process.stdout.write(text)): void {
  // A FORGE_CACHE_DIR or FORGE_HOME that cannot be a directory is said at each build, cached or not: it is
  // this machine's setting, not the project's, so the one the build's scope search said (and a cached result
  // kept) gives way to what the variables are now.
  const result = { ...built, warnings: [...built.warnings.filter((d) => d.code !== 'FORGE_ENV_DIRECTORY'), ...forgeDirProblems()] };
  if (json) {
    write(jsonDocument(buildJson(result, Math.round(ms))));
    return;
  }
  printDiagnostics([...result.errors, ...result.warnings]);
  if (verbose && result.timings.length) write(`stages\n${renderTimings(result.timings)}\n`);
  if (!result.ok) {
    const n = result.errors.length;
    process.stderr.write(`${c.red('✘')} build failed with ${n} error${n === 1 ? '' : 's'}\n`);
    return;
  }
  write(`${renderSummary(result.summary!, cwd)}\n${c.green('✓')} ${result.cached ? 'up to date (cached)' : 'built'} in ${formatMs(ms)}\n`);
}

/** The build's result as data; a failed build in the shape every command fails with (its first error as `error`). */
function buildJson(result: BuildResult, durationMs: number): object {
  const { errors, warnings, ...rest } = result;
  if (!result.ok) return failureJson([...errors, ...warnings], { ...rest, durationMs });
  return { ...rest, ...diagnosticsJson([...errors, ...warnings]), durationMs };
}

/** The request `forge build`'s parsed options make. */
export function buildRequest(values: { config?: string; prod: boolean; out?: string; offline: boolean; sign?: string; 'no-cache': boolean; verbose: boolean; json: boolean }, cwd: string): BuildRequest {
  return { cwd, configFile: values.config, prod: values.prod, outDir: values.out, offline: values.offline, signKey: values.sign, noCache: values['no-cache'], verbose: values.verbose && !values.json };
}
