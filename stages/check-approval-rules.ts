/**
 * Stage: check approval rules. A rule of forge.yaml's `approval:` that
 * names no tool is silently inert at run time: `auto_deny: [name:local_shel]`
 * refuses nothing, so the tool it was meant to refuse runs; a misspelt
 * auto_approve rule leaves its tool asking. Each rule is matched against
 * every tool the project has — dev tools included, so a rule for a tool a
 * --prod build strips is not flagged — and against what may exist without
 * a tool of this project: the security tags (tag:write with no write tool
 * yet), the four categories, and the tools Forge ships (a defensive
 * `name:local_shell` where it is not enabled).
 *
 * A rule that still matches nothing is a warning, with the nearest name,
 * tag or category. It is an error for an auto_deny rule whose nearest match
 * is a tool, tag or category this agent has: that is the tool the rule was
 * surely meant to refuse, and it would run unrefused. A glob that matches
 * nothing is a warning without a suggestion (it may be meant for tools
 * added later). Rules that do not parse are refused earlier, by the schema.
 * The check itself is runtime/tools/unmatched-rules.ts, shared with the
 * command line's rules.
 */
import type { Diagnostic } from '../runtime/diagnostics.ts';
import { approvalRuleCheck } from '../runtime/tools/unmatched-rules.ts';
import { CATALOG } from '../runtime/tools/catalog.ts';
import type { ProjectConfig } from './config/project-config.ts';
import type { ProjectTool } from './project-tool.ts';

/** `tools`: every tool of the project, before --prod strips the dev ones. */
export function checkApprovalRules(config: Pick<ProjectConfig, 'approval' | 'source' | 'emergent'>, tools: readonly Pick<ProjectTool, 'spec'>[]): Diagnostic[] {
  const check = approvalRuleCheck(tools.map((t) => t.spec), config.emergent !== undefined, CATALOG.map((entry) => entry.name));
  // Only the rules forge.yaml writes (the default tag:read always matches by risk).
  const written = config.source.toJS() as { approval?: Record<string, unknown> } | null;
  return (['auto_approve', 'auto_deny'] as const).flatMap((list) =>
    Array.isArray(written?.approval?.[list]) ? config.approval[list].flatMap((text, i) => check(list, text, list, config.source.locate(['approval', list, i])) ?? []) : [],
  );
}
