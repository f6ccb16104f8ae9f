/**
 * Calls whose tool was already chosen — by an MCP client or a REST script
 * (a token holder), or by the agent loop after its approval gate.
 *
 * By default ('approved') the named tool counts as approved, as with
 * `forge tool run`: holding the token is the approval (auto-deny rules still
 * refuse it). forge.yaml's `approval.clients: policy` makes token holders go
 * through the same rules as the model ('policy'): a call that would need a
 * person's confirmation is refused with FORGE_APPROVAL_REQUIRED, since no
 * person can be asked over REST or MCP. A sub-tool that would need its own
 * confirmation goes to `approver`; by default no one is there to answer
 * mid-call, so it is refused.
 */
import { approveNothing, type Approver } from '../guard/approver.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { McpToolSource } from './mcp-server.ts';
import { traceToolCall } from '../telemetry/instrument-tools.ts';
import { isSessionTool, visibleTo } from '../tools/emergent/forged-mark.ts';

export type ClientApproval = 'approved' | 'policy';

/** `clients` may be a function, asked at each call: `forge run --dev` follows forge.yaml's `approval.clients` as it is saved. */
export function clientCalls(registry: ToolRegistry, approver: Approver = approveNothing, clients: ClientApproval | (() => ClientApproval | undefined) = 'approved'): McpToolSource {
  const isApproved = () => (typeof clients === 'function' ? clients() : clients) !== 'policy';
  return {
    list: () => registry.list(),
    get: (name) => registry.get(name),
    resolve: (name) => registry.find(name),
    onToolsChanged: (listener) => registry.onToolsChanged(listener),
    // What a client may set is listed, not spread: approval is never the client's to give.
    execute: (name, args, options = {}) => {
      // approveNothing is no one to ask: the refusal says so (FORGE_APPROVAL_REQUIRED), not that someone said no.
      const approved = isApproved();
      const asks = approved && approver !== approveNothing ? approver : undefined;
      const run = () => registry.execute(name, args, { timeoutMs: options.timeoutMs, signal: options.signal, session: options.session, approved, approver: asks });
      // Counted once: with tracing off there is no span to tell that the agent loop already counts it.
      if (options.instrumented) return run();
      // Metrics may be public: another session's forged tool is counted as no tool, the caller's own by no name.
      const tool = registry.get(name);
      const callable = tool !== undefined && visibleTo(tool, options.session);
      return traceToolCall({ name, registered: callable, sessionTool: callable && isSessionTool(tool), frontend: options.frontend }, args, run);
    },
  };
}
