import { dirname, resolve } from 'node:path';
import { cacheFile, cacheKey, readCacheRecord, staleReason } from '../../stages/build-cache.ts';
import { locateConfig } from '../../stages/config/find-config.ts';
import type { BuildResult, BuildSummary } from '../../stages/pipeline.ts';
import { parseCommand } from '../args.ts';
import { renderSummary, renderTimings } from '../build-summary.ts';
import { diagnosticJson, printDiagnostics } from '../diagnostics-output.ts';
import { color as c, formatMs } from '../terminal.ts';

export const usage = `usage: forge build [--prod] [--out DIR] [--no-cache] [--offline] [--sign KEY] [--verbose] [--json]

Builds the agent into .forge-output/: agent.json, runtime.mjs, tools/,
Dockerfile, build-manifest.json, checksums.json and <agent_id>-<version>.tgz.
The same inputs always give the same bytes; a rebuild with nothing changed
is a cache hit. MCP servers are asked for their tools on every build, and
specs on the web fetched; --offline uses what the last build recorded.

options:
  --prod          production build: every dev tool is left out of every artifact
  --out DIR       output directory (default .forge-output, relative to forge.yaml)
  --no-cache      build even if nothing changed
  --offline       do not reach MCP servers or fetch specs: reuse the tools the last build recorded
  --sign KEY      sign checksums.json with an Ed25519 private key (PEM); the bundle checks it
                  at start when FORGE_VERIFY_KEY holds the public key
  -v, --verbose   print each stage's time
  --json          print the result as JSON

examples:
  forge build --prod
  forge build --out dist/agent --verbose
`;

export async function run(argv: string[]): Promise<number> {
  const started = performance.now();
  const { values } = parseCommand(argv, {
    prod: { type: 'boolean', default: false },
    out: { type: 'string' },
    'no-cache': { type: 'boolean', default: false },
    offline: { type: 'boolean', default: false },
    sign: { type: 'string' },
  });
  const cwd = process.cwd();
  const result = await buildOrReuse({ cwd, configFile: values.config, prod: values.prod, outDir: values.out, offline: values.offline, signKey: values.sign, noCache: values['no-cache'], verbose: values.verbose && !values.json });
  report(result, values.json, cwd, performance.now() - started, values.verbose);
  return result.ok ? 0 : 1;
}

function report(result: BuildResult, json: boolean, cwd: string, ms: number, verbose: boolean) {
  if (json) {
    const out = { ...result, errors: result.errors.map(diagnosticJson), warnings: result.warnings.map(diagnosticJson), durationMs: Math.round(ms) };
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
    return;
  }
  printDiagnostics([...result.errors, ...result.warnings]);
  if (verbose && result.timings.length) process.stdout.write(`stages\n${renderTimings(result.timings)}\n`);
  if (!result.ok) {
    const n = result.errors.length;
    process.stderr.write(`${c.red('✘')} build failed with ${n} error${n === 1 ? '' : 's'}\n`);
    return;
  }
  process.stdout.write(renderSummary(result.summary!, cwd) + '\n');
  process.stdout.write(`${c.green('✓')} ${result.cached ? 'up to date (cached)' : 'built'} in ${formatMs(ms)}\n`);
}

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

/** A build, or the last one when nothing changed (decided from file stats alone, before loading the pipeline). */
export async function buildOrReuse(request: BuildRequest): Promise<BuildResult> {
  const { cwd, prod } = request;
  const configFile = locateConfig({ configFile: request.configFile }, cwd);
  // A signed build always runs: the key is an input the cache does not stamp.
  if (configFile && !request.noCache && !request.signKey) {
    const root = dirname(configFile);
    const outDir = resolve(root, request.outDir ?? '.forge-output');
    const key = cacheKey(configFile, outDir, prod);
    const record = readCacheRecord<BuildSummary>(cacheFile(root, key));
    const stale = !record
      ? 'no previous build'
      : record.live?.length && !request.offline
        ? `${record.live.join(', ')} ${record.live.length === 1 ? 'is' : 'are'} asked on every build (--offline reuses the last answer)`
        : staleReason(record, key);
    if (record && !stale) return { ok: true, cached: true, errors: [], warnings: [], summary: record.summary, timings: [] };
    if (request.verbose) process.stderr.write(c.dim(`cache: rebuilding (${stale})\n`));
  }
  const { build } = await import('../../stages/pipeline.ts');
  return build({ cwd, configFile: request.configFile, prod, outDir: request.outDir, offline: request.offline, signKey: request.signKey });
}
