/**
 * Whether tools in an image made from this base can run in the tool
 * sandbox: the runtime isolates tool processes with bubblewrap, found in the
 * system's directories or on PATH (sandbox-probe.ts). Without it every tool
 * process runs beside the server and reads its environment — the token and
 * the model keys — through /proc. bwrap also needs a /tmp to mount the
 * private one over (the root is bound read-only), and the start-up probe a
 * command to run inside (readlink or true, else /bin/sh): the probe's own
 * lists (PROBE_COMMANDS, SYSTEM_DIRS) are the ones looked for. prlimit (the
 * memory, CPU and process caps) is asked for too, but its absence only
 * warns: the runtime runs without caps and says so.
 *
 * What the container runtime allows (user namespaces, an unmasked /proc)
 * cannot be seen in the layers: where bwrap is refused at start the runtime
 * warns and /readyz says so, as with the Dockerfile's image
 * (FORGE_SANDBOX=required at run time makes that a refusal to start).
 */
import { formatImageReference } from './image-reference.ts';
import type { BaseImage } from './base-image.ts';
import { imagePath, type BaseFiles } from './base-files.ts';
import { error, warning, type Diagnostic } from '../../runtime/diagnostics.ts';
import { PROBE_COMMANDS, SYSTEM_DIRS } from '../../runtime/exec/sandbox-probe.ts';

export function baseSandboxDiagnostics(base: BaseImage, files: BaseFiles): Diagnostic[] {
  const dirs = [...SYSTEM_DIRS, ...imagePath(base)];
  const name = formatImageReference({ ...base.reference, digest: undefined });
  const missing: string[] = [];
  if (!files.findProgram('bwrap', dirs)) missing.push('bubblewrap (no bwrap in /usr/bin, /bin or on PATH)');
  if (!files.isDirectory('/tmp')) missing.push('a /tmp directory (bwrap mounts the private /tmp over it)');
  // The probe looks in the system's directories only (an absolute program as it is).
  if (!PROBE_COMMANDS.some((c) => files.findProgram(c.program, SYSTEM_DIRS))) {
    const names = PROBE_COMMANDS.map((c) => c.program);
    missing.push(`${names.slice(0, -1).join(', ')} or ${names.at(-1)} (the command the start-up probe runs in a sandbox)`);
  }
  const out: Diagnostic[] = [];
  if (missing.length) {
    out.push(
      error(
        'FORGE_PACKAGE_SANDBOX',
        `the base image ${name} cannot run the tool sandbox: it has no ${missing.join(', no ')}. Tools in the image would run unsandboxed, able to read the agent's token and API keys through /proc`,
        {},
        `use a base with bubblewrap: a Dockerfile of two lines, "FROM ${name}" and "RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap && rm -rf /var/lib/apt/lists/*", built and pushed to your registry, then --base REGISTRY/IMAGE (or FORGE_BASE_IMAGE); or, knowing tools then see the agent's secrets, package without a sandbox with --no-sandbox`,
      ),
    );
  }
  if (!files.findProgram('prlimit', dirs)) {
    out.push(warning('FORGE_PACKAGE_CAPS', `the base image ${name} has no prlimit (util-linux): tool processes in the image run without memory, CPU or process caps`, {}, 'install util-linux in the base'));
  }
  return out;
}
