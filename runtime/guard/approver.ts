/**
 * Who confirms a tool call the policy will not run on its own. The front
 * end in use supplies one: the terminal (forge tool run, node runtime.mjs
 * call), a server that asks its client (A2A input-required), or a fixed
 * answer (--yes, no terminal). The registry asks it before the call.
 */
import type { Category, SecurityTag } from '../tools/model.ts';

export interface ApprovalRequest {
  tool: string;
  args: unknown;
  category: Category;
  tags: string[];
  risk: SecurityTag;
  /** Why the call needs a person: "it is tagged \"write\"". */
  reason: string;
  /** The composed tools this call is made from, outermost first (empty for a direct call). */
  parents: string[];
  /** For a singleConfirmation tool: the sub-tools this one confirmation also covers. */
  covers?: string[];
}

export interface Approver {
  approve(request: ApprovalRequest): Promise<boolean>;
}

/** `--yes`: every call that would ask is approved (auto-deny rules still refuse theirs). */
export const approveEverything: Approver = { approve: async () => true };

/** No one to ask: every call that would ask is refused. */
export const approveNothing: Approver = { approve: async () => false };
