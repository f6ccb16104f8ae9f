/**
 * Stage: pin each `npx PACKAGE` stdio MCP server to an exact version, so the
 * image installs it and the container starts it without the network
 * (runtime/tools/adapters/mcp/pinned-package.ts runs it). The version comes
 * from what is on this machine — the project's node_modules, then npx's own
 * cache (what the build just started) — or else from `npm view` (npm's
 * cache first, then the registry).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import semver from 'semver';
import { warning, type Diagnostic } from '../../runtime/diagnostics.ts';
import type { McpServerSettings } from '../../runtime/tools/adapters/settings.ts';

const run = promisify(execFile);

/** `npx [-y] [--] pkg[@range] args...` → the package spec and the server's arguments. */
export function parseNpxArgs(args: readonly string[]): { spec: string; args: string[] } | undefined {
  let i = 0;
  while (i < args.length && args[i].startsWith('-')) {
    if (args[i] === '--') {
      i++;
      break;
    }
    if (args[i] === '-p' || args[i] === '--package') return undefined; // a different form: leave it alone
    i++;
  }
  const spec = args[i];
  if (!spec || /^[./]/.test(spec) || spec.includes(':')) return undefined; // a path, git or URL spec
  return { spec, args: args.slice(i + 1) };
}

export function splitSpec(spec: string): { name: string; range: string } {
  const at = spec.lastIndexOf('@');
  if (at > 0) return { name: spec.slice(0, at), range: spec.slice(at + 1) || '*' };
  return { name: spec, range: '*' };
}

interface Found {
  version: string;
  bin?: string;
}

export async function pinMcpPackages(servers: readonly McpServerSettings[], root: string, env: NodeJS.ProcessEnv = process.env): Promise<{ servers: McpServerSettings[]; diagnostics: Diagnostic[] }> {
  const diagnostics: Diagnostic[] = [];
  const pinned = await Promise.all(
    servers.map(async (server) => {
      if (server.transport !== 'stdio' || server.package) return server;
      const command = (server.command ?? '').split(/[\\/]/).pop();
      if (command !== 'npx' && command !== 'npx.cmd') return server;
      const parsed = parseNpxArgs(server.args ?? []);
      if (!parsed) return server;
      const { name, range } = splitSpec(parsed.spec);
      const found = fromFolder(join(root, 'node_modules', name), range) ?? fromNpxCache(name, range, env) ?? (await fromNpmView(name, range, root, env));
      if (!found) {
        diagnostics.push(warning('FORGE_MCP_PIN', `MCP server "${server.name}": cannot find which version of ${parsed.spec} to pin; the container will need the network to start it`, {}, 'install it in the project (npm install ' + name + ') or make the npm registry reachable, then rebuild'));
        return server;
      }
      return { ...server, package: { name, version: found.version, ...(found.bin ? { bin: found.bin } : {}), args: parsed.args } };
    }),
  );
  return { servers: pinned, diagnostics };
}

function fromFolder(dir: string, range: string): Found | undefined {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; version: string; bin?: string | Record<string, string> };
    if (!semver.satisfies(pkg.version, range === 'latest' ? '*' : range)) return undefined;
    return { version: pkg.version, bin: chooseBin(pkg.name, pkg.bin) };
  } catch {
    return undefined;
  }
}

/** npx keeps what it ran under <npm cache>/_npx/<hash>/node_modules. */
function fromNpxCache(name: string, range: string, env: NodeJS.ProcessEnv): Found | undefined {
  const cache = join(env.npm_config_cache ?? join(homedir(), '.npm'), '_npx');
  if (!existsSync(cache)) return undefined;
  const found = readdirSync(cache)
    .map((entry) => fromFolder(join(cache, entry, 'node_modules', name), range))
    .filter((f): f is Found => f !== undefined);
  return found.sort((a, b) => semver.rcompare(a.version, b.version))[0];
}

async function fromNpmView(name: string, range: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Found | undefined> {
  try {
    const spec = `${name}@${range}`;
    const { stdout } = await run('npm', ['view', spec, 'version', '--json', '--prefer-offline'], { cwd, env, timeout: 60_000 });
    const versions = ([] as string[]).concat(JSON.parse(stdout) as string | string[]);
    const version = versions.sort(semver.rcompare)[0];
    if (!version) return undefined;
    const bin = await run('npm', ['view', `${name}@${version}`, 'bin', '--json', '--prefer-offline'], { cwd, env, timeout: 60_000 });
    return { version, bin: chooseBin(name, bin.stdout.trim() ? (JSON.parse(bin.stdout) as Record<string, string>) : undefined) };
  } catch {
    return undefined;
  }
}

function chooseBin(name: string, bin: string | Record<string, string> | undefined): string | undefined {
  if (!bin) return undefined;
  if (typeof bin === 'string') return bin.replace(/^\.\//, '');
  const entries = Object.entries(bin);
  const own = name.split('/').pop()!;
  const chosen = entries.length === 1 ? entries[0] : (entries.find(([k]) => k === own) ?? entries[0]);
  return chosen?.[1].replace(/^\.\//, '');
}
