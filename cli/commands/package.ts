import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { defaultBaseImage } from '../../runtime/node-lines.ts';
import { dirname, join, relative, resolve } from 'node:path';
import type { AgentManifest } from '../../runtime/manifest.ts';
import { locateConfig } from '../../stages/config/find-config.ts';
import { parseCommand } from '../args.ts';
import { printDiagnostics } from '../diagnostics-output.ts';
import { diagnosticJson, jsonDocument, writeFailureJson } from '../../runtime/failure-json.ts';
import { DiagnosticError, error, ForgeError, warning, type Diagnostic } from '../../runtime/diagnostics.ts';
import { forgeDirProblem } from '../../stages/forge-env-dirs.ts';
import { isDirectory } from '../../runtime/is-directory.ts';
import { defaultCacheDir } from '../../stages/forge-paths.ts';
import { UsageError } from '../usage-error.ts';
import { color as c, formatMs } from '../terminal.ts';
import { buildOrReuse } from './build.ts';

export const usage = `usage: forge package [--base IMAGE] [--out PATH] [--push REGISTRY/REPO:TAG] [--load] [options]

Builds the agent (forge build --prod, cached) and makes an OCI image of the
bundle without a container daemon: the base image is pulled by digest over the
registry API (cached, so later runs work offline), the bundle — and a Python
environment when tools declare Python dependencies — are added as
deterministic layers, and the config runs \`node /opt/agent/runtime.mjs serve\`
as a non-root user in /workspace. The same inputs give the same image digest.

The base must have bubblewrap (the tool sandbox) and the interpreters the
tools start (bash, sh, python3 or python): without them nothing is packaged.
The image keeps forge.yaml's sandbox mode (label dev.forge.sandbox): with
auto, where the container runtime refuses bubblewrap's namespaces, the agent
warns at start and /readyz says so; run it with FORGE_SANDBOX=required (or
set sandbox: required) to refuse to start.

outputs (at least one; default --out .forge-image):
  --out PATH        an OCI image layout directory, or an OCI archive when PATH ends in .tar
  --push REF        push to a registry (loopback registries use plain HTTP;
                    credentials from FORGE_REGISTRY_USER/PASSWORD or ~/.docker/config.json)
  --load            load into a running docker or podman

options:
  --base IMAGE      base image with node (default: the Dockerfile's, from forge.yaml's runtime:; or FORGE_BASE_IMAGE)
  --platform P      os/arch of the image (default: this machine's, e.g. linux/amd64)
  --user UID[:GID]  the user the agent runs as (default 1000:1000, "node" in the node images)
  --no-sandbox      package a base without bubblewrap: tools run unsandboxed and can read the
                    agent's token and keys (the image sets FORGE_SANDBOX=off and says so at start;
                    refused when forge.yaml says sandbox: required)
  --bundle DIR      package this build output instead of building
  --offline         build with --offline
  --json            print the result as JSON

environment:
  FORGE_CACHE_DIR   where base image blobs are cached (default ~/.cache/forge); one that
                    names a file or that this user cannot write is warned of, and the base is
                    pulled into a temporary cache (a read-only one's blobs are still used)
  SOURCE_DATE_EPOCH the image's creation time and file times (default: the epoch)
  PIP_FIND_LINKS, PIP_INDEX_URL   where pip finds the wheels of the Python dependencies

examples:
  forge package --push registry.example.com/agents/support:1.0.0
  forge package --base node:22-bookworm-slim --out support.tar
`;

// A registry that cannot be reached or a base without bubblewrap throws: cli/main.ts reports it (one JSON document with --json, its warnings kept).
export async function run(argv: string[]): Promise<number> {
  const started = performance.now();
  const { values } = parseCommand(argv, {
    base: { type: 'string' },
    out: { type: 'string' },
    push: { type: 'string' },
    load: { type: 'boolean', default: false },
    platform: { type: 'string' },
    user: { type: 'string', default: '1000:1000' },
    bundle: { type: 'string' },
    offline: { type: 'boolean', default: false },
    'no-sandbox': { type: 'boolean', default: false },
  });
  const cwd = process.cwd();
  const log = (line: string) => values.json || process.stderr.write(c.dim(`${line}\n`));
  // What text mode prints on stderr as it goes; with --json, the document's `warnings` (its only output is that document).
  const warnings: Diagnostic[] = [];
  const warn = (diagnostics: readonly Diagnostic[]) => (values.json ? warnings.push(...diagnostics) : printDiagnostics(diagnostics));
  // A FORGE_CACHE_DIR that cannot be a directory, or that this user cannot write: the image is still made (the base pulled into a
  // temporary cache, removed after), and said. A directory it can read still serves the blobs it holds (a CI runner's pre-seeded,
  // read-only cache): only those it lacks are pulled, and with all of them there it works offline.
  const cacheProblem = forgeDirProblem('FORGE_CACHE_DIR');
  const readOnlyCache = cacheProblem && isDirectory(defaultCacheDir()) ? defaultCacheDir() : undefined;
  if (cacheProblem) {
    const instead = readOnlyCache ? 'the base image is read from it where it holds it, the rest pulled into a temporary cache' : 'the base image is pulled into a temporary cache, and forge package cannot work offline';
    warn([{ ...cacheProblem, message: `${cacheProblem.message}: ${instead}` }]);
  }
  const [{ packageImage, imageSandbox, SandboxModeConflict }, { parseImageReference, formatImageReference }, { BlobCache }, { hostPlatform, parsePlatform }] = await Promise.all([
    import('../../stages/package/package-image.ts'),
    import('../../stages/package/image-reference.ts'),
    import('../../stages/blob-cache.ts'),
    import('../../stages/package/base-image.ts'),
  ]);
  // A forge.yaml that requires the sandbox refuses --no-sandbox: a usage error, with the way out.
  const checkSandbox = (agent: Pick<AgentManifest, 'sandbox'>) => {
    try {
      imageSandbox(agent, values['no-sandbox']);
    } catch (err) {
      if (err instanceof SandboxModeConflict) throw new UsageError(err.message, err.hint);
      throw err;
    }
  };
  const reference = (text: string, what: string) => {
    try {
      return parseImageReference(text);
    } catch (err) {
      throw new UsageError(`${what}: ${(err as Error).message}`);
    }
  };
  const push = values.push ? reference(values.push, '--push') : undefined;
  let platform;
  try {
    platform = values.platform ? parsePlatform(values.platform) : hostPlatform();
  } catch (err) {
    throw new UsageError((err as Error).message);
  }

  if (values.bundle && !existsSync(resolve(cwd, values.bundle, 'agent.json'))) throw new UsageError(`--bundle ${values.bundle} is not a build output (no agent.json)`);
  // --no-sandbox against forge.yaml's sandbox: required, before anything is built (the bundle's agent.json says it again below).
  if (values['no-sandbox'] && !values.bundle) {
    const file = locateConfig({ configFile: values.config }, cwd);
    const loaded = file ? await (await import('../../stages/config/load-config.ts')).loadConfig(file, cwd) : undefined;
    if (loaded?.config) checkSandbox(loaded.config);
  }
  // --load's engine before any work: without one, building, pip and pulling the base would be time spent for nothing.
  const engine = values.load ? (await import('../../stages/package/load-image.ts')).requireEngine() : undefined;

  let bundleDir: string;
  if (values.bundle) bundleDir = resolve(cwd, values.bundle);
  else {
    const built = await buildOrReuse({ cwd, configFile: values.config, prod: true, offline: values.offline });
    if (values.json && !built.ok) {
      writeFailureJson(true, [...built.errors, ...built.warnings, ...warnings]);
      return 1;
    }
    if (!values.json) printDiagnostics(built.errors);
    warn(built.warnings);
    if (!built.ok) {
      process.stderr.write(`${c.red('✘')} build failed; nothing packaged\n`);
      return 1;
    }
    bundleDir = built.summary!.outDir;
  }

  // The same base the Dockerfile names: forge.yaml's runtime: { image | node }, else the default line's.
  const built = JSON.parse(readFileSync(resolve(bundleDir, 'agent.json'), 'utf8')) as Pick<AgentManifest, 'sandbox'> & { runtime?: { image?: string } };
  checkSandbox(built);
  const base = reference(values.base ?? process.env.FORGE_BASE_IMAGE ?? built.runtime?.image ?? defaultBaseImage(), '--base');
  const epoch = process.env.SOURCE_DATE_EPOCH;
  const temporaryCache = cacheProblem ? mkdtempSync(join(tmpdir(), 'forge-package-cache-')) : undefined;
  try {
    const cache = new BlobCache(temporaryCache, readOnlyCache ? new BlobCache(readOnlyCache) : undefined);
    const image = await packageImage({
      bundleDir,
      base,
      platform,
      cache,
      user: values.user,
      sourceDateEpoch: epoch && /^\d+$/.test(epoch) ? Number(epoch) : undefined,
      noSandbox: values['no-sandbox'],
      log,
    });
    warn(image.warnings);
    // FORGE_SANDBOX=off is in the image only when forge.yaml did not say off already.
    if (image.sandbox === 'off') {
      const unsandboxed = `the image runs tools WITHOUT a sandbox (${built.sandbox?.mode === 'off' ? "forge.yaml's sandbox: off" : '--no-sandbox; FORGE_SANDBOX=off'}): they can read the agent's token and API keys`;
      if (values.json) warnings.push(warning('FORGE_IMAGE_UNSANDBOXED', unsandboxed));
      else log(`warning: ${unsandboxed}`);
    }
    const tag = `${image.agent.agent_id}:${image.agent.version}`;
    const outputs: Record<string, string> = {};
    const out = values.out ?? (push || values.load ? undefined : resolve(dirname(bundleDir), '.forge-image'));
    if (out) {
      const target = resolve(cwd, out);
      const { ociArchive, writeOciDirectory } = await import('../../stages/package/oci-layout.ts');
      if (target.endsWith('.tar')) writeFileSync(target, await ociArchive(image.manifest, image.manifestDescriptor, image.blobs, tag));
      else writeOciDirectory(target, image.manifest, image.manifestDescriptor, image.blobs, tag);
      outputs.out = target;
      log(`wrote ${target.endsWith('.tar') ? 'an OCI archive' : 'an OCI layout'}: ${relative(cwd, target) || target}`);
    }
    if (push) {
      const { pushImage } = await import('../../stages/package/push-image.ts');
      const pushed = await pushImage(push, image.manifest, image.manifestDescriptor, image.blobs);
      outputs.push = `${formatImageReference({ ...push, digest: undefined })}@${pushed.digest}`;
      log(`pushed ${outputs.push} (${pushed.uploaded} blobs uploaded, ${pushed.skipped} already there)`);
    }
    if (engine) {
      const [{ ociArchive }, { loadImage }] = await Promise.all([import('../../stages/package/oci-layout.ts'), import('../../stages/package/load-image.ts')]);
      const loaded = await loadImage(await ociArchive(image.manifest, image.manifestDescriptor, image.blobs, tag), tag, engine);
      outputs.load = `${loaded.engine}: ${tag}`;
      log(`loaded into ${loaded.engine} as ${tag}`);
    }
    const ms = performance.now() - started;
    if (values.json) {
      process.stdout.write(jsonDocument({ ok: true, digest: image.manifestDescriptor.digest, sandbox: image.sandbox, base: { reference: formatImageReference(base), digest: image.baseDigest, from: image.baseSource }, size: image.size, outputs, durationMs: Math.round(ms), warnings: warnings.map(diagnosticJson) }));
    } else {
      process.stdout.write(`${c.green('✓')} packaged ${tag} ${image.manifestDescriptor.digest} (${mb(image.size.total)} MB, ${mb(image.size.added)} MB added to the base) in ${formatMs(ms)}\n`);
    }
    return 0;
  } catch (err) {
    // A registry that cannot be reached, a base without bubblewrap: cli/main.ts reports it, and with --json
    // its one document keeps what was warned of before, as a failed build's does.
    if (values.json && err instanceof ForgeError) throw new DiagnosticError([error(err.code, err.message, {}, err.hint), ...warnings]);
    throw err;
  } finally {
    if (temporaryCache) rmSync(temporaryCache, { recursive: true, force: true });
  }
}

function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
