/**
 * What a client (REST, MCP, stdio) hands the registry: its timeout, its
 * cancellation and its session pass through; an approval never does — that
 * is the server's to give (`approval.clients`), not the caller's.
 */
import { describe, expect, it } from 'vitest';
import { ApprovalPolicy } from '../../../runtime/guard/approval-policy.ts';
import type { Approver } from '../../../runtime/guard/approver.ts';
import { clientCalls } from '../../../runtime/server/client-calls.ts';
import { ok, type Tool, type ToolContext } from '../../../runtime/tools/model.ts';
import { ToolRegistry } from '../../../runtime/tools/registry.ts';
import { metrics } from '../../../runtime/telemetry/forge-metrics.ts';

function tool(name: string, tags: string[], execute: Tool['execute'] = async () => ok(name)): Tool {
  return { name, description: name, category: 'custom', inputSchema: { type: 'object' }, tags, execute };
}

const yes: Approver = { approve: async () => true };

function registryWith(...tools: Tool[]): ToolRegistry {
  const registry = new ToolRegistry({ workDir: process.cwd(), approval: ApprovalPolicy.create(undefined) });
  for (const t of tools) registry.register(t, 'test');
  return registry;
}

describe('clientCalls', () => {
  it('under approval.clients: policy, refuses a call that needs a person even when the caller says it is approved', async () => {
    let ran = false;
    const calls = clientCalls(registryWith(tool('writer', ['write'], async () => ((ran = true), ok(null)))), undefined, 'policy');
    const result = await calls.execute('writer', {}, { approved: true, approver: yes });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_APPROVAL_REQUIRED' } });
    expect(ran).toBe(false);
  });

  it("answers and counts a call to another session's forged tool as a call to no tool, whatever the caller claims to see", async () => {
    let ran = false;
    const secret = { ...tool('their_secret', ['read'], async () => ((ran = true), ok('secret'))), forged: { tier: 'session', owner: 'context:a' } } as Tool;
    const calls = clientCalls(registryWith(secret));
    for (const session of ['context:b', undefined]) {
      const result = await calls.execute('their_secret', {}, { session, sees: 'everything', frontend: 'mcp' });
      expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_UNKNOWN' } });
    }
    expect(ran).toBe(false);
    // The metrics (public where forge.yaml says so) do not tell it from a made-up name either,
    const unknownCalls = () => Number(/^forge_tool_calls_total\{tool="\(unknown\)",frontend="mcp",outcome="FORGE_TOOL_UNKNOWN"\} (\d+)$/m.exec(metrics.render())?.[1] ?? 0);
    const before = unknownCalls();
    await calls.execute('their_secret', {}, { session: 'context:b', frontend: 'mcp' });
    expect(unknownCalls() - before).toBe(1);
    // and its own session's calls are counted by no name.
    expect(await calls.execute('their_secret', {}, { session: 'context:a', frontend: 'mcp' })).toMatchObject({ ok: true, value: 'secret' });
    expect(metrics.render()).toMatch(/^forge_tool_calls_total\{tool="\(session tool\)",frontend="mcp",outcome="ok"\} 1$/m);
    expect(metrics.render()).not.toContain('their_secret');
  });

  it('passes the caller\'s timeout, cancellation and session through', async () => {
    let seenSession: string | undefined;
    const calls = clientCalls(
      registryWith(
        tool('slow', ['read'], () => new Promise(() => {})),
        tool('whoami', ['read'], async (_args, ctx: ToolContext) => ((seenSession = ctx.session), ok(null))),
      ),
    );
    expect(await calls.execute('slow', {}, { timeoutMs: 30 })).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_TIMEOUT' } });

    const controller = new AbortController();
    const cancelled = calls.execute('slow', {}, { signal: controller.signal });
    controller.abort();
    expect(await cancelled).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_CANCELLED' } });

    await calls.execute('whoami', {}, { session: 'mcp:abc' });
    expect(seenSession).toBe('mcp:abc');
  });
});
