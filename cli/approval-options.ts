/**
 * The command line's side of the approval policy: --yes, --auto-approve
 * and --auto-deny, and who to ask — the terminal when there is one.
 */
import { ApprovalPolicy } from '../runtime/guard/approval-policy.ts';
import type { Approver } from '../runtime/guard/approver.ts';
import { personApprover } from '../runtime/guard/terminal-approver.ts';
import type { ApprovalSettings } from '../runtime/manifest.ts';
import type { OptionSpec } from './args.ts';

export const APPROVAL_OPTIONS = {
  yes: { type: 'boolean', short: 'y', default: false },
  'auto-approve': { type: 'string', multiple: true },
  'auto-deny': { type: 'string', multiple: true },
} as const satisfies OptionSpec;

export const APPROVAL_USAGE = `approval (the tool you name is yours to run; the tools it calls go through the policy):
  --yes, -y             approve every call that would ask (auto-deny rules still refuse)
  --auto-approve RULE   also run these without asking: tag:read, name:file_read, category:custom, globs
  --auto-deny RULE      refuse these, always (wins over every approve rule)
  Calls that need confirmation are asked on the terminal; without one, they are refused unless --yes.`;

export interface ApprovalChoice {
  policy: ApprovalPolicy;
  approver?: Approver;
}

/** Throws a DiagnosticError for a rule that does not parse. */
export function approvalFromOptions(settings: ApprovalSettings, values: { yes?: boolean; 'auto-approve'?: string[]; 'auto-deny'?: string[] }): ApprovalChoice {
  const policy = ApprovalPolicy.create(settings, { autoApprove: values['auto-approve'], autoDeny: values['auto-deny'] });
  return { policy, approver: personApprover(values.yes === true) };
}
