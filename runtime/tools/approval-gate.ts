/**
 * The approval check the registry makes before every call: the policy's
 * verdict, then — for a call that needs a person — the coverage of an
 * enclosing single-confirmation call, the person's own request, or the
 * approver. A singleConfirmation tool is confirmed once for everything its
 * call will do: it asks if it, or any tool it can reach through composedOf,
 * would ask, and its sub-calls then run under that confirmation.
 */
import { riskOf } from '../guard/approval-rules.ts';
import type { ApprovalPolicy, Verdict } from '../guard/approval-policy.ts';
import type { Approver } from '../guard/approver.ts';
import { fail, type Tool, type ToolResult, type ToolSpec } from './model.ts';

/** Where a call stands in a composition. */
export interface CallFrame {
  depth: number;
  /** The tools this call is made from, outermost first. */
  chain: string[];
  /** An enclosing single-confirmation call was confirmed: calls that would ask run without asking. */
  covered: boolean;
  approver?: Approver;
  /** The person asked for this call themselves (top level only). */
  approved: boolean;
  /** The conversation or MCP session the call comes from (what session-tier forged tools belong to). */
  session?: string;
  /** Beyond `session`'s own, which session-tier forged tools the call may reach (ExecuteOptions.sees). */
  sees?: 'everything' | 'this-tool';
}

/** How the call got through: for logs and the registry's call events. */
export type ApprovalOutcome = 'policy' | 'person' | 'confirmed' | 'covered' | 'unchecked';

export type GateResult = { ok: true; outcome: ApprovalOutcome; coversSubCalls: boolean } | { ok: false; result: ToolResult };

export async function checkApproval(
  tool: Tool,
  args: unknown,
  frame: CallFrame,
  policy: ApprovalPolicy | undefined,
  lookup: (name: string) => Tool | undefined,
): Promise<GateResult> {
  if (!policy) return { ok: true, outcome: 'unchecked', coversSubCalls: frame.covered };
  const single = tool.singleConfirmation === true;
  const calledBy = frame.chain.length ? ` (called by ${frame.chain.join(' → ')})` : '';
  const { verdict, covers, asks } = decideCall(tool, policy, lookup);
  if (verdict.decision === 'deny') {
    return {
      ok: false,
      result: fail('FORGE_TOOL_DENIED', `tool "${tool.name}" is refused by the approval rule "${verdict.rule}"${calledBy}`, "auto-deny rules come from approval.auto_deny in forge.yaml (a built bundle: agent.json's) and --auto-deny; they always win"),
    };
  }
  const coversSubCalls = frame.covered || single;
  if (!asks) return { ok: true, outcome: 'policy', coversSubCalls };
  if (frame.covered) return { ok: true, outcome: 'covered', coversSubCalls };
  if (frame.approved) return { ok: true, outcome: 'person', coversSubCalls };

  const reason = verdict.decision === 'ask' ? verdict.reason : `it calls tools that need confirmation (${covers.join(', ')})`;
  if (!frame.approver) {
    return {
      ok: false,
      result: fail(
        'FORGE_APPROVAL_REQUIRED',
        `tool "${tool.name}" needs a person's confirmation (${reason}) and there is no one to ask${frame.chain.length ? `; it was called by ${frame.chain.join(' → ')}` : ''}`,
        // Said wherever the call came from (the project, a built bundle, a client of the server): each way that approves it.
        "add a rule to approval.auto_approve in forge.yaml (a built bundle: agent.json's, or --auto-approve); from a terminal, forge tool run and the bundle's call ask, and --yes approves such calls",
      ),
    };
  }
  const approved = await frame.approver.approve({
    tool: tool.name,
    args,
    category: tool.category,
    tags: [...tool.tags],
    risk: riskOf(tool),
    reason,
    parents: [...frame.chain],
    ...(single ? { covers } : {}),
  });
  if (!approved) {
    return { ok: false, result: fail('FORGE_TOOL_NOT_APPROVED', `the call to "${tool.name}" was not approved${calledBy}`) };
  }
  return { ok: true, outcome: 'confirmed', coversSubCalls };
}

/**
 * The policy's answer for a call of `tool`, single confirmation included: a
 * singleConfirmation tool asks when it, or any tool it can reach, would ask
 * (`covers` names those). The registry and the agent loop's gate both decide
 * with this.
 */
export function decideCall(tool: ToolSpec, policy: ApprovalPolicy, lookup: (name: string) => ToolSpec | undefined): { verdict: Verdict; covers: string[]; asks: boolean } {
  const verdict = policy.decide(tool);
  const covers = verdict.decision !== 'deny' && tool.singleConfirmation ? subToolsThatAsk(tool, policy, lookup) : [];
  return { verdict, covers, asks: verdict.decision === 'ask' || covers.length > 0 };
}

/** The tools reachable through composedOf that the policy would ask about (not those it denies: those stay refused). */
function subToolsThatAsk(tool: ToolSpec, policy: ApprovalPolicy, lookup: (name: string) => ToolSpec | undefined): string[] {
  const seen = new Set<string>([tool.name]);
  const asking: string[] = [];
  const visit = (names: readonly string[] | undefined) => {
    for (const name of names ?? []) {
      if (seen.has(name)) continue;
      seen.add(name);
      const sub = lookup(name);
      if (!sub) continue;
      if (policy.decide(sub).decision === 'ask') asking.push(name);
      visit(sub.composedOf);
    }
  };
  visit(tool.composedOf);
  return asking;
}
