/**
 * The approval policy: which tool calls run on their own, which are
 * refused, and which a person must confirm. Rules come from forge.yaml's
 * `approval:` (recorded in agent.json) and the command line's
 * --auto-approve / --auto-deny. An auto-deny rule always wins. When
 * forge.yaml says nothing, `tag:read` is the one auto-approve rule.
 */
import { DiagnosticError, error, type Diagnostic } from '../diagnostics.ts';
import type { ApprovalSettings } from '../manifest.ts';
import type { ToolSpec } from '../tools/model.ts';
import { isRule, isSecurityTag, parseRule, riskOf, type ApprovalRule } from './approval-rules.ts';

const DEFAULT_AUTO_APPROVE = ['tag:read'];

export type Verdict =
  | { decision: 'allow'; rule: string }
  | { decision: 'deny'; rule: string }
  | { decision: 'ask'; reason: string };

export interface PolicyRules {
  autoApprove: readonly string[];
  autoDeny: readonly string[];
}

export class ApprovalPolicy {
  private constructor(
    private readonly approve: ApprovalRule[],
    private readonly deny: ApprovalRule[],
    /** forge.yaml set auto_approve, which replaces the default tag:read (said when a read tool asks). */
    private readonly defaultReplaced: boolean,
  ) {}

  /** Rules from agent.json or forge.yaml, plus the command line's. Throws a DiagnosticError for a rule that does not parse. */
  static create(settings: ApprovalSettings | undefined, extra: Partial<PolicyRules> = {}): ApprovalPolicy {
    const problems: Diagnostic[] = [];
    const parse = (texts: readonly string[], flag: string) =>
      texts.flatMap((text) => {
        const rule = parseRule(text);
        if (isRule(rule)) return [rule];
        problems.push(error('FORGE_APPROVAL_RULE', `${flag}: ${rule.problem}`, {}, rule.hint));
        return [];
      });
    const approve = [...parse(settings?.auto_approve ?? DEFAULT_AUTO_APPROVE, 'auto_approve'), ...parse(extra.autoApprove ?? [], '--auto-approve')];
    const deny = [...parse(settings?.auto_deny ?? [], 'auto_deny'), ...parse(extra.autoDeny ?? [], '--auto-deny')];
    if (problems.length) throw new DiagnosticError(problems);
    return new ApprovalPolicy(approve, deny, settings?.auto_approve !== undefined && !settings.auto_approve.includes('tag:read'));
  }

  /** Refuses every call, saying `why`: what is put in force when the rules meant to be in force do not parse. */
  static refusingEverything(why: string): ApprovalPolicy {
    return new ApprovalPolicy([], [{ text: why, matches: () => true }], false);
  }

  decide(tool: Pick<ToolSpec, 'name' | 'tags' | 'category'>): Verdict {
    const denied = this.deny.find((r) => r.matches(tool));
    if (denied) return { decision: 'deny', rule: denied.text };
    const approved = this.approve.find((r) => r.matches(tool));
    if (approved) return { decision: 'allow', rule: approved.text };
    const replaced = this.defaultReplaced && riskOf(tool) === 'read' ? ', and approval.auto_approve in forge.yaml replaces the default tag:read without listing it' : '';
    return { decision: 'ask', reason: reasonFor(tool) + replaced };
  }
}

function reasonFor(tool: Pick<ToolSpec, 'tags'>): string {
  return tool.tags.some(isSecurityTag) ? `it is tagged "${riskOf(tool)}"` : 'it has no security tag, so it counts as "run"';
}
