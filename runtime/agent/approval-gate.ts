/**
 * The question the agent loop asks before every tool call: may it run,
 * must it not, or must a person decide? The approval policy (forge.yaml
 * `approval:`) answers it; a front end (A2A, the terminal) asks the person.
 */
import type { ToolSpec } from '../tools/model.ts';

export type GateDecision = 'allow' | 'deny' | 'ask';

export interface ApprovalGate {
  decide(tool: ToolSpec, args: unknown): GateDecision;
  /**
   * For a call it asks about: the tools the one approval also approves (a singleConfirmation tool's
   * sub-tools that would ask on their own), which the person must be told of before answering.
   */
  covers?(tool: ToolSpec): string[];
}

/** Every call runs (a person is driving, or no policy is configured). */
export const allowAllGate: ApprovalGate = { decide: () => 'allow' };
