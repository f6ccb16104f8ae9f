/**
 * agent.json's `approval:` checked as the bundle starts, the way the build
 * checks forge.yaml's: the bundle runs agent.json as it finds it, and one
 * edited by hand (FORGE_VERIFY=off, or rebuilt by something else) could
 * hold an `auto_denny:` key, or an auto_deny rule one slip from the tool it
 * was meant to refuse, and that tool would run unrefused. A section of the
 * wrong shape or a rule that does not parse is an error (FORGE_APPROVAL_RULE)
 * that stops the start; a rule that matches none of the bundle's tools is
 * FORGE_APPROVAL_UNMATCHED, from the check the build and the command line
 * use (unmatched-rules.ts), a name: rule only when it is a slip from one of
 * them (the bundle cannot tell another name from a tool it was built without). Cheap when the rules are fine: no import beyond
 * what the start loads already, and agent.json's text is searched for a
 * line only to place a problem.
 */
import { error, type Diagnostic } from '../diagnostics.ts';
import { locateInJson } from '../manifest-read.ts';
import { isRule, parseRule } from '../guard/approval-rules.ts';
import type { AgentManifest } from '../manifest.ts';
import { approvalRuleCheck, type RuleList } from './unmatched-rules.ts';

const LISTS: readonly RuleList[] = ['auto_approve', 'auto_deny'];
const CLIENTS = ['approved', 'policy'];
const REBUILD = 'run forge build to write agent.json again, or fix it by hand';

/** `file`: agent.json as it is shown; `text`: its content, searched for a problem's line. */
export function checkManifestApproval(manifest: Pick<AgentManifest, 'approval' | 'tools' | 'emergent'>, file: string, text: string): Diagnostic[] {
  const at = (...keys: string[]) => locateInJson(file, text, ['approval', ...keys]);
  const approval: unknown = manifest.approval;
  if (typeof approval !== 'object' || approval === null || Array.isArray(approval)) {
    return [error('FORGE_APPROVAL_RULE', 'agent.json\'s "approval" is not an object with auto_approve and auto_deny', at(), REBUILD)];
  }
  const section = approval as Record<string, unknown>;
  const problems: Diagnostic[] = [];
  for (const key of Object.keys(section)) {
    if (![...LISTS, 'clients'].includes(key)) problems.push(error('FORGE_APPROVAL_RULE', `agent.json's approval has an unknown key "${key}"`, at(key), `approval has ${[...LISTS, 'clients'].join(', ')}; ${REBUILD}`));
  }
  if (section.clients !== undefined && !CLIENTS.includes(section.clients as string)) {
    problems.push(error('FORGE_APPROVAL_RULE', `agent.json's approval.clients is ${JSON.stringify(section.clients)}`, at('clients'), `approval.clients is ${CLIENTS.map((c) => `"${c}"`).join(' or ')}`));
  }
  const rules: { list: RuleList; text: string }[] = [];
  for (const list of LISTS) {
    const texts = section[list];
    if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string')) {
      const problem = texts === undefined ? `agent.json's approval has no ${list} list` : `agent.json's approval.${list} is not a list of rules`;
      problems.push(error('FORGE_APPROVAL_RULE', problem, texts === undefined ? at() : at(list), `a rule looks like tag:read, name:file_read or category:custom; ${REBUILD}`));
      continue;
    }
    for (const text of texts as string[]) {
      const rule = parseRule(text);
      if (isRule(rule)) rules.push({ list, text });
      else problems.push(error('FORGE_APPROVAL_RULE', `agent.json's approval.${list}: ${rule.problem}`, at(list, JSON.stringify(text)), rule.hint));
    }
  }
  if (problems.length) return problems;
  // The bundle's tools only: a name: rule may name a tool a --prod build left out, or a shipped one not enabled (the build
  // checked those), so one is reported only when it is a slip from one of the bundle's tools.
  const check = approvalRuleCheck(manifest.tools, manifest.emergent !== undefined, 'unknown');
  return rules.flatMap(({ list, text }) => check(list, text, `agent.json's ${list}`, at(list, JSON.stringify(text))) ?? []);
}
