/**
 * The approval policy (forge.yaml `approval:`) as the agent loop's gate,
 * deciding with the registry's own rule (decideCall), so the person is asked
 * once, before the call, and the call then runs as approved.
 */
import type { ApprovalPolicy } from '../guard/approval-policy.ts';
import { decideCall } from '../tools/approval-gate.ts';
import type { ToolSpec } from '../tools/model.ts';
import type { ApprovalGate } from './approval-gate.ts';

/** `policy` is asked for at every decision: hot reload may have put another one in force. */
export function policyGate(policy: () => ApprovalPolicy, lookup: (name: string) => ToolSpec | undefined): ApprovalGate {
  return {
    decide(spec) {
      const { verdict, asks } = decideCall(lookup(spec.name) ?? spec, policy(), lookup);
      return verdict.decision === 'deny' ? 'deny' : asks ? 'ask' : 'allow';
    },
    covers(spec) {
      return decideCall(lookup(spec.name) ?? spec, policy(), lookup).covers;
    },
  };
}
