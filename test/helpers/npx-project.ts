/**
 * A project whose stdio MCP server is started the way users write it —
 * `npx -y @modelcontextprotocol/server-filesystem .` — with the package in
 * the project's node_modules (linked to Forge's dev dependency), so npx
 * finds it without the network.
 */
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { minimalConfig, repoRoot, writeProject } from './project.ts';

export const FILESYSTEM_PACKAGE = '@modelcontextprotocol/server-filesystem';
export const filesystemVersion = (): string => JSON.parse(readFileSync(join(repoRoot, 'node_modules', FILESYSTEM_PACKAGE, 'package.json'), 'utf8')).version;

export function npxMcpProject(extraConfig = ''): string {
  const dir = writeProject({
    'forge.yaml': minimalConfig(`mcp:\n  servers:\n    - name: fs\n      transport: stdio\n      command: npx\n      args: ["-y", "${FILESYSTEM_PACKAGE}", "."]\n      tools: { allow: [list_allowed_directories, list_directory] }\n${extraConfig}`),
  });
  mkdirSync(join(dir, 'node_modules', '@modelcontextprotocol'), { recursive: true });
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(join(repoRoot, 'node_modules', FILESYSTEM_PACKAGE), join(dir, 'node_modules', FILESYSTEM_PACKAGE));
  symlinkSync(join('..', FILESYSTEM_PACKAGE, 'dist', 'index.js'), join(dir, 'node_modules', '.bin', 'mcp-server-filesystem'));
  return dir;
}
