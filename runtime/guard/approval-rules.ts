/**
 * Approval rules: `tag:read`, `name:file_read`, `category:custom`, with
 * globs (`name:file_*`, `tag:net*`). A tool's security tags give its risk,
 * read < write < run, and a tool with no security tag counts as run.
 *
 * `tag:read`, `tag:write` and `tag:run` match a tool by its risk, so a tool
 * tagged both read and write is a write tool: `tag:read` does not approve
 * it. Other tags match as written.
 */
import type { ToolSpec } from '../tools/model.ts';
import { patternMatcher } from './rule-pattern.ts';
import { SECURITY_TAGS, type SecurityTag } from './security-tags.ts';

export type RuleKind = 'tag' | 'name' | 'category';
const RULE_KINDS: readonly RuleKind[] = ['tag', 'name', 'category'];

export interface ApprovalRule {
  /** As written: `tag:read`. */
  text: string;
  matches(tool: Pick<ToolSpec, 'name' | 'tags' | 'category'>): boolean;
}

/** A rule as forge.yaml writes it: what it matches by (`tag`), and the name or glob it matches (`read`). */
export interface ParsedRule extends ApprovalRule {
  kind: RuleKind;
  pattern: string;
}

export function isSecurityTag(tag: string): tag is SecurityTag {
  return (SECURITY_TAGS as readonly string[]).includes(tag);
}

/** The highest security tag of a tool; no security tag counts as run. */
export function riskOf(tool: Pick<ToolSpec, 'tags'>): SecurityTag {
  let risk = -1;
  for (const tag of tool.tags) if (isSecurityTag(tag)) risk = Math.max(risk, SECURITY_TAGS.indexOf(tag));
  return risk < 0 ? 'run' : SECURITY_TAGS[risk];
}

/**
 * The tags a tag: rule sees on a tool: security tags by risk (a tool tagged read and write has write, not
 * read), every other tag as it is; a glob such as tag:* still sees every tag.
 */
export function ruleTags(tool: Pick<ToolSpec, 'tags'>): string[] {
  return [...tool.tags.filter((t) => !isSecurityTag(t)), riskOf(tool)];
}

export function parseRule(text: string): ParsedRule | { problem: string; hint: string } {
  const colon = text.indexOf(':');
  const kind = text.slice(0, colon) as RuleKind;
  const pattern = text.slice(colon + 1);
  if (colon < 0 || !RULE_KINDS.includes(kind) || !pattern) {
    return { problem: `"${text}" is not an approval rule`, hint: 'rules look like tag:read, name:file_read or category:custom (globs allowed: name:file_*)' };
  }
  const matchesPattern = patternMatcher(pattern, kind !== 'name');
  const matches = (tool: Pick<ToolSpec, 'name' | 'tags' | 'category'>): boolean => {
    switch (kind) {
      case 'name':
        return matchesPattern(tool.name);
      case 'category':
        return matchesPattern(tool.category);
      case 'tag':
        return ruleTags(tool).some(matchesPattern);
    }
  };
  return { text, kind, pattern, matches };
}

export function isRule(parsed: ReturnType<typeof parseRule>): parsed is ParsedRule {
  return 'matches' in parsed;
}
