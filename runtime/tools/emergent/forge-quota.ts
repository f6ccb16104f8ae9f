/**
 * Quotas on forging: at most max_tools forged tools per session and for the
 * whole agent, and at most calls_per_minute forge_tool calls per session
 * (a sliding minute).
 */
import type { ToolRegistry } from '../registry.ts';
import type { EmergentSettings } from './forge-request.ts';
import { forgedTools } from './register-step.ts';

export class ForgeQuota {
  private readonly calls = new Map<string, number[]>();

  constructor(private readonly settings: EmergentSettings) {}

  /** Counts a forge_tool call; the refusal's message when the session is over its rate. */
  takeCall(session: string, now = Date.now()): string | undefined {
    const recent = (this.calls.get(session) ?? []).filter((t) => now - t < 60_000);
    if (recent.length >= this.settings.calls_per_minute) {
      this.calls.set(session, recent);
      return `forge_tool was called ${recent.length} times in the last minute; the limit is ${this.settings.calls_per_minute} per minute`;
    }
    recent.push(now);
    this.calls.set(session, recent);
    return undefined;
  }

  /** The refusal's message when one more tool would exceed max_tools (for this session, or for the agent). */
  roomFor(registry: ToolRegistry, session: string | undefined): string | undefined {
    const forged = forgedTools(registry);
    const max = this.settings.max_tools;
    if (forged.length >= max) return `the agent has ${forged.length} forged tools; the limit is ${max} (emergent.max_tools)`;
    const mine = forged.filter((t) => t.forged.owner === session).length;
    if (session && mine >= max) return `this session has forged ${mine} tools; the limit is ${max} (emergent.max_tools)`;
    return undefined;
  }
}
