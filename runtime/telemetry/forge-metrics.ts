/**
 * The metrics a Forge agent exposes at /metrics. One process, one set: the
 * module-level registry is what every front end, the agent loop and the
 * tool registry record into.
 */
import { MetricsRegistry } from './metrics-registry.ts';

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export const metrics = new MetricsRegistry();

export const toolCalls = metrics.counter('forge_tool_calls_total', 'Tool calls, by tool, front end and outcome (ok or the error code).', ['tool', 'frontend', 'outcome']);
export const toolErrors = metrics.counter('forge_tool_errors_total', 'Tool calls that ended with an error result, by tool and front end.', ['tool', 'frontend']);
export const toolDuration = metrics.histogram('forge_tool_call_duration_seconds', 'Tool call latency, by tool and front end.', ['tool', 'frontend'], SECONDS);
export const requests = metrics.counter('forge_requests_total', 'HTTP requests, by front end (a2a, mcp, rest, studio, other) and status code.', ['frontend', 'code']);
export const requestDuration = metrics.histogram('forge_request_duration_seconds', 'HTTP request latency by front end.', ['frontend'], SECONDS);
export const modelCalls = metrics.counter('forge_model_calls_total', 'Model calls, by model and outcome (ok, error, or canceled: stopped by its caller).', ['model', 'outcome']);
export const modelTokens = metrics.counter('forge_model_tokens_total', 'Tokens the models reported, by model and type: input (every input token), output, and cache_read and cache_write (the input tokens read from and written to the provider\'s prompt cache).', ['model', 'type']);
export const modelDuration = metrics.histogram('forge_model_call_duration_seconds', 'Model call latency by model.', ['model'], SECONDS);
export const approvals = metrics.counter('forge_approvals_total', 'Approval decisions: asked, granted, denied (by whom: policy or person).', ['decision', 'by']);
export const turnsInFlight = metrics.gauge('forge_turns_in_flight', 'Agent turns running now.');
export const turns = metrics.counter('forge_turns_total', 'Agent turns, by how they ended: completed, input-required, max-iterations, canceled (by its client) or error.', ['status']);
export const workerRestarts = metrics.counter('forge_worker_restarts_total', 'Tool worker processes started again, by why the one before stopped (exited: it crashed, or a call was cancelled or ran out of time; mounts: the sandbox would now mount otherwise).', ['reason']);
export const sandboxRefusals = metrics.counter('forge_sandbox_refusals_total', 'Sandboxed tool calls stopped at a cap (time, memory or output size), by tool.', ['tool']);
export const egressRefusals = metrics.counter('forge_egress_refusals_total', 'Outgoing HTTP requests the egress policy refused.');
export const scheduleFirings = metrics.counter('forge_schedule_firings_total', 'Scheduled task firings, by outcome (ok or error).', ['outcome']);
