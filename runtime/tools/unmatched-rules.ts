/**
 * An approval rule that matches no tool (FORGE_APPROVAL_UNMATCHED), checked
 * the same way wherever rules meet tools: forge.yaml's at build and
 * validate (stages/check-approval-rules.ts), and the --auto-approve and
 * --auto-deny of forge tool run and of the bundle's commands. In runtime/,
 * so the bundle has it. A near miss of a tool the agent has in an auto_deny
 * rule is an error (that tool would run unrefused); the rest warn.
 */
import { error, warning, type Diagnostic, type Location } from '../diagnostics.ts';
import { isRule, parseRule, ruleTags, type RuleKind as Kind } from '../guard/approval-rules.ts';
import { SECURITY_TAGS } from '../guard/security-tags.ts';
import { closestMatch } from '../suggest.ts';
import { CATEGORIES, type Category, type ToolSpec } from './model.ts';

const GLOB = /[*?[\]{}()!+@]/;

export type RuleList = 'auto_approve' | 'auto_deny';
type List = RuleList;

/** The command line's --auto-approve and --auto-deny rules that match none of `specs`. */
export function unmatchedOptionRules(specs: readonly ToolSpec[], emergent: boolean, rules: { autoApprove?: readonly string[]; autoDeny?: readonly string[] }, shipped: readonly string[] = []): Diagnostic[] {
  const check = approvalRuleCheck(specs, emergent, shipped);
  return [
    ...(rules.autoApprove ?? []).map((rule) => check('auto_approve', rule, '--auto-approve')),
    ...(rules.autoDeny ?? []).map((rule) => check('auto_deny', rule, '--auto-deny')),
  ].filter((d) => d !== undefined);
}

/**
 * The check of one rule against `specs`: a diagnostic if it matches none,
 * named `shownAs` (auto_deny in forge.yaml, --auto-deny on the command line).
 * `shipped`: the names of the tools Forge ships, which a rule may name
 * without this project having them (the catalog's, from the CLI and the
 * build). The bundle passes none: the catalog would put every shipped tool
 * into its core, and a --prod bundle holds no trace of the tools it left
 * out; a rule there naming one matches nothing, and is said to. 'unknown'
 * (agent.json's own rules, which the build checked against every tool the
 * project had): a name: rule near none of the bundle's tools may name one of
 * those, and is not reported; one a slip from a tool the bundle has is.
 */
export function approvalRuleCheck(specs: readonly ToolSpec[], emergent: boolean, shipped: readonly string[] | 'unknown' = []): (list: List, text: string, shownAs: string, at?: Location) => Diagnostic | undefined {
  // What the agent has: an auto_deny typo one slip from one of these lets that tool run.
  const present: Record<Kind, Set<string>> = {
    name: new Set(specs.map((s) => s.name)),
    // Tags as the rules see them: security tags by risk.
    tag: new Set(specs.flatMap(ruleTags)),
    category: new Set(specs.map((s) => s.category)),
  };
  // What a rule may name without this project having it.
  const known: Record<Kind, Set<string>> = {
    name: new Set([...present.name, ...(shipped === 'unknown' ? [] : shipped)]),
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
    if (shipped === 'unknown' && kind === 'name' && !present.name.has(closestMatch(pattern, present.name) ?? '')) return undefined;
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
