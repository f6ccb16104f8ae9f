/**
 * An agent turn as a span ("invoke_agent <agent>") with the conversation id,
 * and the in-flight turns gauge. Approvals asked and answered are counted
 * here too: the agent loop reports them through these two functions.
 */
import type { AgentOutcome } from '../agent/agent-loop.ts';
import { approvals, turns, turnsInFlight } from './forge-metrics.ts';
import { inSpan } from './tracer.ts';

/**
 * Whether a turn's signal was aborted by its client (an A2A `tasks/cancel`, a studio tab closed): a plain
 * `abort()`, whose reason is the standard AbortError. A process that stops, or a task's lease lost, aborts
 * with a reason of its own: the task ends failed, so the turn counts as an error.
 */
export function canceledByClient(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true && signal.reason instanceof DOMException && signal.reason.name === 'AbortError';
}

/**
 * `signal`: the turn's. A turn its client canceled counts as `canceled`, not `error`: an alert on
 * failed turns must not fire because people press stop. Its span is no error either (status unset,
 * as OpenTelemetry asks of what is no failure): `forge.turn.status` says canceled, and an event when.
 */
export async function traceTurn(agentId: string, contextId: string, kind: 'send' | 'resume', run: () => Promise<AgentOutcome>, signal?: AbortSignal): Promise<AgentOutcome> {
  turnsInFlight.add({}, 1);
  const canceled = () => canceledByClient(signal);
  try {
    const outcome = await inSpan(
      `invoke_agent ${agentId}`,
      { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': agentId, 'gen_ai.conversation.id': contextId, 'forge.turn.kind': kind },
      async (span) => {
        try {
          const outcome = await run();
          span.setAttribute('forge.turn.status', outcome.status);
          return outcome;
        } catch (err) {
          if (canceled()) {
            span.setAttribute('forge.turn.status', 'canceled');
            span.addEvent('forge.turn.canceled');
          }
          throw err;
        }
      },
      { notAnError: canceled },
    );
    turns.inc({ status: outcome.status });
    return outcome;
  } catch (err) {
    turns.inc({ status: canceled() ? 'canceled' : 'error' });
    throw err;
  } finally {
    turnsInFlight.add({}, -1);
  }
}

/**
 * The gate's decisions for one model answer: `allow` counts as granted by the policy, `ask` as asked,
 * `deny` as denied by the policy. A name no tool has (`unknown`) was not the gate's to decide.
 */
export function countGateDecisions(decisions: ReadonlyMap<string, string>): void {
  for (const decision of decisions.values()) {
    if (decision === 'allow') approvals.inc({ decision: 'granted', by: 'policy' });
    else if (decision === 'ask') approvals.inc({ decision: 'asked', by: 'policy' });
    else if (decision === 'deny') approvals.inc({ decision: 'denied', by: 'policy' });
  }
}

/** A person's answers to the calls that waited for them. */
export function countPersonAnswers(decisions: ReadonlyMap<string, string>, answers: ReadonlyMap<string, boolean>): void {
  for (const [id, decision] of decisions) {
    if (decision === 'ask') approvals.inc({ decision: answers.get(id) === true ? 'granted' : 'denied', by: 'person' });
  }
}
