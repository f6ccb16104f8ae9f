import type { BuildResult } from '../../stages/pipeline.ts';
import { parseCommand } from '../args.ts';
import { BUILD_OPTIONS, buildRequest, cachedBuild, reportBuild, type BuildRequest } from '../cached-build.ts';
import { color as c } from '../terminal.ts';

export type { BuildRequest };

export const usage = `usage: forge build [--prod] [--out DIR] [--no-cache] [--offline] [--sign KEY] [--verbose] [--json]

Builds the agent into .forge-output/: agent.json, runtime.mjs, forge-runtime.cjs,
vendor/, tools/, Dockerfile, build-manifest.json, checksums.json and
<agent_id>-<version>.tgz.
The same inputs always give the same bytes; a rebuild with nothing changed
is a cache hit. MCP servers are asked for their tools on every build, and
specs on the web fetched; --offline uses what the last build recorded.

options:
  --prod          production build: every dev tool is left out of every artifact
  --out DIR       output directory (default .forge-output, relative to forge.yaml)
  --no-cache      build even if nothing changed, the runtime core included (Forge's cache
                  keeps one per set of builtins, in FORGE_CACHE_DIR or ~/.cache/forge)
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
  const { values } = parseCommand(argv, BUILD_OPTIONS);
  const cwd = process.cwd();
  const result = await buildOrReuse(buildRequest(values, cwd));
  reportBuild(result, values.json, cwd, performance.now() - started, values.verbose);
  return result.ok ? 0 : 1;
}

/** A build, or the last one when nothing changed (decided from file stats alone, before loading the pipeline). */
export async function buildOrReuse(request: BuildRequest): Promise<BuildResult> {
  const cached = cachedBuild(request);
  if (cached && 'result' in cached) return cached.result;
  if (cached && request.verbose) process.stderr.write(c.dim(`cache: rebuilding (${cached.stale})\n`));
  const { build } = await import('../../stages/pipeline.ts');
  const { cwd, prod } = request;
  return build({ cwd, configFile: request.configFile, prod, outDir: request.outDir, offline: request.offline, signKey: request.signKey, noCache: request.noCache });
}
