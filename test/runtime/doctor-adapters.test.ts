/**
 * doctor and the adapters' secrets: an API's auth variables, the `${VAR}`
 * of MCP servers' url, headers, env and args, and whether a stdio server's
 * command is there — each a line naming the variable (or command) and what
 * needs it, FAIL where serve or every call would fail.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { doctor, formatDoctor } from '../../runtime/doctor.ts';
import type { McpServerSettings } from '../../runtime/tools/adapters/settings.ts';
import { tempDir } from '../helpers/project.ts';

const server = (over: Partial<McpServerSettings>): McpServerSettings => ({ name: 'docs', transport: 'http', timeout_ms: 5000, required: true, ...over });
const base = { sandbox: { mode: 'off' as const } };

describe('doctor: adapter secrets and commands', () => {
  it("fails when an API's auth variable is not set, naming it and the API; ok when it is", async () => {
    const workDir = tempDir();
    const apis = [{ name: 'suppliers', spec: 'specs/s.json', base_url: 'https://api.example.com', timeout_ms: 5000, auth: { type: 'bearer' as const, token_env: 'SUPPLIERS_TOKEN' } }];
    const unset = await doctor({ ...base, apis }, workDir, { PATH: process.env.PATH });
    expect(unset.ok).toBe(false);
    expect(unset.checks).toContainEqual({ name: 'api suppliers', ok: false, detail: 'SUPPLIERS_TOKEN is not set: every call to API "suppliers" fails with FORGE_API_AUTH', hint: 'set SUPPLIERS_TOKEN (auth: of API "suppliers" in forge.yaml)', code: 'FORGE_API_AUTH' });
    // A bundle has no forge.yaml: the code alone under the line, no location.
    expect(formatDoctor(unset)).toMatch(/^FAIL {2}api suppliers {2}SUPPLIERS_TOKEN is not set.*\n +FORGE_API_AUTH\n +hint: set SUPPLIERS_TOKEN/m);
    const set = await doctor({ ...base, apis }, workDir, { PATH: process.env.PATH, SUPPLIERS_TOKEN: 'secret-token' });
    expect(set.ok).toBe(true);
    expect(set.checks).toContainEqual({ name: 'api suppliers', ok: true, detail: 'SUPPLIERS_TOKEN (environment)' });
    expect(JSON.stringify(set)).not.toContain('secret-token');
  });

  it("checks the ${VAR} of MCP servers' headers and env, and that a stdio server's command exists: FAIL for a required server, warn for an optional one", async () => {
    const workDir = tempDir();
    writeFileSync(join(workDir, 'server.sh'), '#!/bin/sh\n');
    chmodSync(join(workDir, 'server.sh'), 0o755);
    const servers = [
      server({ name: 'docs', url: 'https://docs.example.com/mcp', headers: { Authorization: 'Bearer ${DOCS_TOKEN}' } }),
      server({ name: 'notes', transport: 'stdio', command: 'no-such-mcp-server', required: false, env: { NOTES_KEY: '${NOTES_KEY}' } }),
      server({ name: 'local', transport: 'stdio', command: './server.sh' }),
    ];
    const report = await doctor({ ...base, mcp: { servers } }, workDir, { PATH: '/usr/bin:/bin' });
    expect(report.ok).toBe(false);
    expect(report.checks).toContainEqual({ name: 'mcp docs', ok: false, detail: 'DOCS_TOKEN is not set (used in mcp.servers[docs].headers.Authorization): the server does not connect and the agent does not start', hint: 'set DOCS_TOKEN in the environment the agent runs in', code: 'FORGE_MCP_CONNECT' });
    expect(report.checks).toContainEqual({ name: 'mcp notes', ok: true, warning: true, detail: 'NOTES_KEY is not set (used in mcp.servers[notes].env.NOTES_KEY): the server is skipped, and its tools with it', hint: 'set NOTES_KEY in the environment the agent runs in', code: 'FORGE_MCP_SKIPPED' });
    expect(report.checks).toContainEqual(expect.objectContaining({ name: 'mcp notes', ok: true, warning: true, detail: 'command "no-such-mcp-server" is not found on PATH: the server is skipped, and its tools with it', code: 'FORGE_MCP_SKIPPED' }));
    expect(report.checks).toContainEqual({ name: 'mcp local', ok: true, detail: `stdio: ${join(workDir, 'server.sh')}` });

    const fine = await doctor({ ...base, mcp: { servers: [servers[0]] } }, workDir, { PATH: '/usr/bin:/bin', DOCS_TOKEN: 't' });
    expect(fine.ok).toBe(true);
    expect(fine.checks).toContainEqual({ name: 'mcp docs', ok: true, detail: 'http: every variable it names is set' });
  });
});
