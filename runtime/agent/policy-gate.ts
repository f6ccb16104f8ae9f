/**
 * The approval policy (forge.yaml `approval:`) as the agent loop's gate. A
 * single-confirmation tool asks when it, or any tool it can reach, would
 * ask — the same rule the registry applies — so the person is asked once,
 * before the call, and the call then runs as approved.
 */
import type { ApprovalPolicy } from '../guard/approval-policy.ts';
import { subToolsThatAsk } from '../tools/approval-gate.ts';
import type { Tool } from '../tools/model.ts';
import type { ApprovalGate } from './approval-gate.ts';

export function policyGate(policy: ApprovalPolicy, lookup: (name: string) => Tool | undefined): ApprovalGate {
  return {
    decide(spec) {
      const verdict = policy.decide(spec);
      if (verdict.decision !== 'allow') return verdict.decision;
      const tool = lookup(spec.name);
      return tool?.singleConfirmation && subToolsThatAsk(tool, policy, lookup).length ? 'ask' : 'allow';
    },
  };
}
