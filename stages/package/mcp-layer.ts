/**
 * The layer with the stdio MCP servers' npm packages, at the versions the
 * build pinned (agent.json mcp.servers[].package), in /opt/forge-mcp. npm on
 * this machine installs them (its cache first), production dependencies
 * only and without install scripts; the runtime finds them through
 * FORGE_MCP_PACKAGES and starts them with node, offline. Packages with native
 * addons get this machine's build: for those, build the Dockerfile instead.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import { ForgeError } from '../../runtime/diagnostics.ts';
import type { AgentManifest } from '../../runtime/manifest.ts';
import { mcpPackages } from '../emit-container.ts';
import { writeLayer, type Layer, type LayerEntry } from './layer-writer.ts';
import { npmPackageProblem } from './npm-package-spec.ts';
import { filesUnder } from '../../runtime/dirent-dir.ts';

const run = promisify(execFile);

export const MCP_DIR = '/opt/forge-mcp';

export async function mcpLayer(agent: AgentManifest, options: { mtime: number; env?: NodeJS.ProcessEnv; log?: (line: string) => void }): Promise<{ layer: Layer; comment: string; env: Record<string, string> } | undefined> {
  const packages = mcpPackages(agent);
  if (!packages.length) return undefined;
  for (const server of agent.mcp?.servers ?? []) {
    const problem = server.package && npmPackageProblem(server.package.name, server.package.version);
    if (problem) throw new ForgeError('FORGE_PACKAGE_MCP', `the bundle's agent.json pins MCP server "${server.name}" to a package npm would not read as one: ${problem}`, 'rebuild the bundle with forge build --prod: the build pins each npx server to the package and version it finds');
  }
  const prefix = mkdtempSync(join(tmpdir(), 'forge-mcp-'));
  try {
    options.log?.(`mcp: installing ${packages.join(', ')}`);
    try {
      await run('npm', ['install', '--prefix', prefix, '--omit=dev', '--no-save', '--no-package-lock', '--prefer-offline', '--no-fund', '--no-audit', '--ignore-scripts', '--loglevel=error', '--', ...packages], { env: options.env ?? process.env, timeout: 600_000, maxBuffer: 16 * 1024 * 1024 });
    } catch (err) {
      const stderr = String((err as { stderr?: string }).stderr ?? (err as Error).message).trim().split('\n').slice(-4).join('\n');
      throw new ForgeError('FORGE_PACKAGE_MCP', `npm could not install the MCP servers' packages ${packages.join(', ')}:\n${stderr}`, "make the npm registry reachable once (npm's cache keeps them), or build the Dockerfile in the bundle instead");
    }
    const modules = join(prefix, 'node_modules');
    const entries: LayerEntry[] = [];
    // Regular files only: .bin links are not needed (the runtime starts the bin script with node).
    for (const file of filesUnder(modules)) {
      const rel = relative(modules, file).split(sep).join('/');
      if (rel === '.package-lock.json') continue;
      entries.push({ path: `${MCP_DIR}/node_modules/${rel}`, type: 'file', data: readFileSync(file), mode: (statSync(file).mode & 0o111) !== 0 ? 0o755 : 0o644 });
    }
    return { layer: await writeLayer(entries, options.mtime), comment: `MCP server packages: ${packages.join(', ')}`, env: { FORGE_MCP_PACKAGES: `${MCP_DIR}/node_modules` } };
  } finally {
    rmSync(prefix, { recursive: true, force: true });
  }
}
