/**
 * A stdio MCP server started through `npx PACKAGE` runs, when the build
 * pinned its package (agent.json `package: { name, version, bin }`) and that
 * exact version is installed — in the image, or globally — from the installed
 * files with this node: no npx, no registry, so it starts offline. Otherwise
 * npx runs the pinned version (`npx -y name@version`), never "latest".
 *
 * Where installed packages are looked for: FORGE_MCP_PACKAGES (the image and
 * the Dockerfile set it), then npm's global folder beside this node.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { McpServerSettings } from '../settings.ts';
import { expandSecretArgs } from '../env-template.ts';

export interface PinnedPackage {
  name: string;
  version: string;
  /** The package's bin script, relative to the package folder. */
  bin?: string;
  /** The server's own arguments (what followed the package in the npx command). */
  args: string[];
}

export function packageFolders(env: NodeJS.ProcessEnv): string[] {
  const folders = (env.FORGE_MCP_PACKAGES ?? '').split(':').filter(Boolean);
  // npm's global prefix on Unix is the node binary's ../lib/node_modules.
  folders.push(join(dirname(dirname(process.execPath)), 'lib', 'node_modules'));
  return folders;
}

/**
 * The command to start: the installed package with this node, or the pinned npx command; undefined when not pinned.
 * The server's own arguments are forge.yaml's: their ${VAR}s are read from `env` now, as an unpinned command line's are.
 */
export function pinnedCommand(server: McpServerSettings, env: NodeJS.ProcessEnv): { command: string; args: string[] } | undefined {
  const pinned = server.package;
  if (!pinned) return undefined;
  const pin = { ...pinned, args: expandSecretArgs(pinned.args, env, `mcp.servers[${server.name}].args`) };
  if (pin.bin) {
    for (const folder of packageFolders(env)) {
      const dir = join(folder, pin.name);
      try {
        const installed = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string };
        if (installed.version === pin.version && existsSync(join(dir, pin.bin))) return { command: process.execPath, args: [join(dir, pin.bin), ...pin.args] };
      } catch {
        /* not installed here */
      }
    }
  }
  return { command: server.command ?? 'npx', args: ['-y', `${pin.name}@${pin.version}`, ...pin.args] };
}
