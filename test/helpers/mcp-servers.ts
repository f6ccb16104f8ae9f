/**
 * Real MCP servers that nobody here wrote, installed as dev dependencies:
 * @modelcontextprotocol/server-filesystem (stdio) and
 * @modelcontextprotocol/server-everything (stdio, and Streamable HTTP as a
 * process of its own on a loopback port, stopped after each file).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { onFileEnd } from './file-cleanup.ts';
import type { McpServerSettings } from '../../runtime/tools/adapters/settings.ts';
import { repoRoot } from './project.ts';
import { freePort } from './free-port.ts';

export const filesystemServerScript = join(repoRoot, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const everythingServerScript = join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

export function filesystemServer(dir: string, extra: Partial<McpServerSettings> = {}): McpServerSettings {
  return { name: 'fs', transport: 'stdio', command: process.execPath, args: [filesystemServerScript, dir], timeout_ms: 20_000, required: true, ...extra };
}

export function everythingStdioServer(extra: Partial<McpServerSettings> = {}): McpServerSettings {
  return { name: 'everything', transport: 'stdio', command: process.execPath, args: [everythingServerScript, 'stdio'], timeout_ms: 20_000, required: true, ...extra };
}

const started: ChildProcess[] = [];
onFileEnd(async () => {
  await Promise.all(
    started.splice(0).map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
});


/** server-everything's Streamable HTTP transport, on a free port; resolves once it listens. */
export async function startEverythingHttp(): Promise<{ url: string; port: number }> {
  const port = await freePort();
  const child = spawn(process.execPath, [everythingServerScript, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  started.push(child);
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`server-everything did not start listening: ${output}`)), 20_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited with ${code}: ${output}`));
    });
  });
  child.stderr!.resume();
  return { url: `http://127.0.0.1:${port}/mcp`, port };
}
