/**
 * Tool calls as spans ("execute_tool <name>", GenAI semantic conventions)
 * and metrics (calls, errors, latency per tool and front end). The span is
 * opened once per top-level call, by whoever makes it first (the agent loop
 * knows the model's call id and the gate's decision; a front end knows
 * only itself); the registry's call events add the category and how the
 * approval went, and composed sub-calls become child spans.
 *
 * The tool label is a registered tool's name, or UNKNOWN_TOOL for any
 * other: the name comes from a client or a model, and each distinct label
 * value is a series kept for the life of the process (thousands of long
 * made-up names once made /metrics too large to build). A session's own
 * forged tool is SESSION_TOOL: its name is for that session only.
 */
import type { ToolResult } from '../tools/model.ts';
import type { CallEvent, ToolRegistry } from '../tools/registry.ts';
import { sandboxStatus } from '../exec/tool-sandbox.ts';
import { sandboxRefusals, toolCalls, toolDuration, toolErrors } from './forge-metrics.ts';
import { traceContent } from './trace-content.ts';
import { currentScope, nowMs, startSpan, tracingEnabled, withSpan } from './tracer.ts';

/** The tool label of a call to a name no tool is registered under (parentheses: never a tool's name). */
export const UNKNOWN_TOOL = '(unknown)';
/**
 * The tool label of a call to one session's own forged tool: its name is that session's, and
 * metrics may be public (`metrics: public`), so it is never a label. Another session's call to
 * the name is UNKNOWN_TOOL, as a made-up name is.
 */
export const SESSION_TOOL = '(session tool)';

export interface ToolCallInfo {
  name: string;
  /** Whether the caller can call a tool named `name`; if not, it is counted and traced as UNKNOWN_TOOL. */
  registered: boolean;
  /** The tool is the calling session's own forged tool: counted and traced as SESSION_TOOL. */
  sessionTool?: boolean;
  callId?: string;
  /** The agent loop's gate: allow, deny, or ask (then answered by a person). */
  decision?: string;
  /** A person's answer when the gate asked: allow or deny. */
  answer?: string;
  frontend?: string;
}

export function traceToolCall(info: ToolCallInfo, args: unknown, run: () => Promise<ToolResult>): Promise<ToolResult> {
  // Tracing off: no async context at all (on Node 20 every promise made inside one pays for it).
  if (!tracingEnabled()) return countedCall(toolLabel(info), info.frontend ?? 'direct', run);
  return tracedCall(info, args, run);
}

async function tracedCall(info: ToolCallInfo, args: unknown, run: () => Promise<ToolResult>): Promise<ToolResult> {
  const scope = currentScope();
  if (scope?.toolSpan) return run();
  const frontend = info.frontend ?? scope?.frontend ?? 'direct';
  const tool = toolLabel(info);
  const started = performance.now();
  // The span's name is grouped on by trace back ends too: the unknown name is in its attribute only.
  const span = startSpan(`execute_tool ${tool}`, {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': info.name,
    'gen_ai.tool.type': 'function',
    'gen_ai.tool.call.id': info.callId,
    'forge.frontend': frontend,
    'forge.approval.decision': info.decision,
    'forge.approval.answer': info.answer === undefined ? undefined : info.answer === 'allow' ? 'approved' : 'denied',
    'gen_ai.tool.call.arguments': traceContent(args),
  });
  let result: ToolResult;
  try {
    result = await withSpan(span, run, { toolSpan: true, frontend });
  } catch (err) {
    span.setError((err as Error).message);
    span.end();
    throw err;
  }
  const outcome = countResult(tool, frontend, result, started);
  if (span.recording) {
    span.setAttributes({ 'forge.tool.outcome': outcome, 'gen_ai.tool.call.result': traceContent(result.ok ? result.value : result.error) });
    if (!result.ok) span.setError(`${result.error.code}: ${result.error.message}`);
    span.end();
  }
  return result;
}

function toolLabel(info: ToolCallInfo): string {
  return !info.registered ? UNKNOWN_TOOL : info.sessionTool ? SESSION_TOOL : info.name;
}

/** The metrics alone: one promise more than the call's own, not an async frame. */
function countedCall(tool: string, frontend: string, run: () => Promise<ToolResult>): Promise<ToolResult> {
  const started = performance.now();
  return run().then((result) => {
    countResult(tool, frontend, result, started);
    return result;
  });
}

/** A sandboxed call stopped at one of its caps: time, memory, output size. */
const SANDBOX_CAPS = new Set<string>(['FORGE_SANDBOX_TIMEOUT', 'FORGE_SANDBOX_MEMORY', 'FORGE_SANDBOX_OUTPUT']);

function countResult(tool: string, frontend: string, result: ToolResult, started: number): string {
  const outcome = result.ok ? 'ok' : result.error.code;
  toolCalls.inc({ tool, frontend, outcome });
  if (!result.ok) toolErrors.inc({ tool, frontend });
  if (!result.ok && SANDBOX_CAPS.has(result.error.code)) sandboxRefusals.inc({ tool });
  toolDuration.observe({ tool, frontend }, (performance.now() - started) / 1000);
  return outcome;
}

/** Category and approval outcome on the open tool span; sub-calls of composed tools as child spans. */
export function observeRegistry(registry: ToolRegistry): () => void {
  return registry.onCall((event: CallEvent) => {
    const scope = currentScope();
    const span = scope?.span;
    if (!span?.recording) return;
    const category = registry.get(event.name)?.category;
    if (event.depth === 0) {
      // Custom tools run as processes, under the sandbox this process installed (bubblewrap or none).
      const sandbox = category === 'custom' ? sandboxStatus()?.isolation : undefined;
      span.setAttributes({ 'forge.tool.category': category, 'forge.approval.outcome': event.approval, 'forge.sandbox.isolation': sandbox });
      return;
    }
    const child = startSpan(`execute_tool ${event.name}`, {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': event.name,
      'gen_ai.tool.type': 'function',
      'forge.tool.category': category,
      'forge.tool.depth': event.depth,
      'forge.approval.outcome': event.approval,
      'forge.tool.outcome': event.result.ok ? 'ok' : event.result.error.code,
      'gen_ai.tool.call.arguments': traceContent(event.args),
    }, { startTime: nowMs() - event.durationMs });
    if (!event.result.ok) child.setError(`${event.result.error.code}: ${event.result.error.message}`);
    child.end();
  });
}
