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
 */
import { error, warning, type Diagnostic, type Location } from '../runtime/diagnostics.ts';
import { isRule, parseRule, ruleTags, type RuleKind as Kind } from '../runtime/guard/approval-rules.ts';
import { SECURITY_TAGS } from '../runtime/guard/security-tags.ts';
import { closestMatch } from '../runtime/suggest.ts';
import { CATALOG } from '../runtime/tools/catalog.ts';
import { CATEGORIES, type Category } from '../runtime/tools/model.ts';
import type { ProjectConfig } from './config/project-config.ts';
import type { ProjectTool } from './project-tool.ts';

const GLOB = /[*?[\]{}()!+@]/;

type List = 'auto_approve' | 'auto_deny';

/** `tools`: every tool of the project, before --prod strips the dev ones. */
export function checkApprovalRules(config: Pick<ProjectConfig, 'approval' | 'source' | 'emergent'>, tools: readonly ProjectTool[]): Diagnostic[] {
  const check = approvalRuleCheck(tools, config.emergent !== undefined);
  // Only the rules forge.yaml writes (the default tag:read always matches by risk).
  const written = config.source.toJS() as { approval?: Record<string, unknown> } | null;
  return (['auto_approve', 'auto_deny'] as const).flatMap((list) =>
    Array.isArray(written?.approval?.[list]) ? config.approval[list].flatMap((text, i) => check(list, text, list, config.source.locate(['approval', list, i])) ?? []) : [],
  );
}

/**
 * The check of one rule against `tools`: a diagnostic if it matches none,
 * named `shownAs` (auto_deny in forge.yaml, --auto-deny on the command line).
 */
export function approvalRuleCheck(tools: readonly ProjectTool[], emergent: boolean): (list: List, text: string, shownAs: string, at?: Location) => Diagnostic | undefined {
  const specs = tools.map((t) => t.spec);
  // What the agent has: an auto_deny typo one slip from one of these lets that tool run.
  const present: Record<Kind, Set<string>> = {
    name: new Set(specs.map((s) => s.name)),
    // Tags as the rules see them: security tags by risk.
    tag: new Set(specs.flatMap(ruleTags)),
    category: new Set(specs.map((s) => s.category)),
  };
  // What a rule may name without this project having it.
  const known: Record<Kind, Set<string>> = {
    name: new Set([...present.name, ...CATALOG.map((e) => e.name), 'forge_tool']),
    tag: new Set([...present.tag, ...SECURITY_TAGS]),
    category: new Set([...present.category, ...CATEGORIES]),
  };
  return (list, text, shownAs, at = {}) => {
    const rule = parseRule(text);
    if (!isRule(rule)) return undefined; // refused where it is read
    const { kind, pattern } = rule;
    if (specs.some((s) => rule.matches(s))) return undefined;
    // A shipped tool, a security tag or a category counts whether or not this project has it.
    const probe = (value: string) => rule.matches({ name: value, tags: [value], category: value as Category });
    if ([...(kind === 'name' ? known.name : kind === 'tag' ? SECURITY_TAGS : CATEGORIES)].some(probe)) return undefined;
    if (GLOB.test(pattern)) {
      return warning('FORGE_APPROVAL_UNMATCHED', `${shownAs} rule "${text}" matches no tool`, at, `it ${list === 'auto_deny' ? 'refuses' : 'approves'} nothing until a tool it matches is added; check the pattern`);
    }
    const what = kind === 'name' ? `no tool is named "${pattern}"` : kind === 'tag' ? `no tool is tagged "${pattern}"` : `"${pattern}" is not a category`;
    const suggestion = closestMatch(pattern, known[kind]);
    const unrefused = list === 'auto_deny' && suggestion !== undefined && present[kind].has(suggestion);
    const message = `${shownAs} rule "${text}" matches no tool: ${what}${unrefused ? `, so ${kind === 'name' ? `"${suggestion}"` : `what is ${kind === 'tag' ? 'tagged' : 'in'} "${suggestion}"`} is not refused` : ''}`;
    const fix = suggestion ? `did you mean "${kind}:${suggestion}"?` : `a rule names a tool (name:), a tag (tag:) or a category (category:${CATEGORIES.join('|')}); forge tool list shows them`;
    const later = kind === 'name' && emergent ? ' (a tool forge_tool makes at run time is matched by name when it is made)' : '';
    return (unrefused ? error : warning)('FORGE_APPROVAL_UNMATCHED', message, at, fix + later);
  };
}
