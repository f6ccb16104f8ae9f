/**
 * The tool sandbox's mode for one start: FORGE_SANDBOX's when set (an
 * operator debugging a host, or the image `forge package --no-sandbox`
 * made), else forge.yaml's. A FORGE_SANDBOX that names no mode is refused,
 * not ignored: "requried" falling back to forge.yaml's `auto` would run
 * tools without isolation on a host that cannot give it, which is what its
 * writer meant to forbid. Serve, `forge tool run` and doctor read it here.
 */
import { SandboxRequiredError, type ModeSource, type SandboxSettings } from './tool-sandbox.ts';

type SandboxMode = SandboxSettings['mode'];

const MODES: readonly SandboxMode[] = ['off', 'auto', 'required'];

export function sandboxMode(configured: SandboxMode | undefined, env: NodeJS.ProcessEnv): { mode: SandboxMode; from: ModeSource } {
  const override = env.FORGE_SANDBOX?.trim();
  if (!override) return { mode: configured ?? 'auto', from: 'forge.yaml' };
  if (!(MODES as readonly string[]).includes(override)) {
    throw new SandboxRequiredError(
      `FORGE_SANDBOX="${override.slice(0, 40)}" is not a sandbox mode (off, auto or required): tools are not run rather than run in a mode guessed`,
      "set FORGE_SANDBOX to off, auto or required, or unset it to use forge.yaml's sandbox mode",
    );
  }
  return { mode: override as SandboxMode, from: 'FORGE_SANDBOX' };
}
