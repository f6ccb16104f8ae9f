/** Approval rules that match no tool: a misspelt auto_deny lets its tool run, a misspelt auto_approve leaves it asking. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, writeProject } from '../helpers/project.ts';

const tsTool = (name: string, docstring: string) => `/**\n * Tool: ${name}\n * Description: The ${name} tool.\n${docstring}*/\nexport function execute() {\n  return 1;\n}\n`;

const TOOLS = {
  'tools/slugify.ts': tsTool('slugify', ' * Tags: read, text\n'),
  'tools/save_note.ts': tsTool('save_note', ' * Tags: write, notes\n'),
  'tools/dev_probe.ts': tsTool('dev_probe', ' * Category: dev\n'),
};

function config(approve: string[], deny: string[], extra = ''): string {
  const list = (rules: string[]) => `[${rules.map((r) => JSON.stringify(r)).join(', ')}]`;
  return minimalConfig(`${extra}approval:\n  auto_approve: ${list(approve)}\n  auto_deny: ${list(deny)}\n`);
}

/** Where `rule` is written in forge.yaml: forge.yaml:LINE:COLUMN (of its opening quote). */
function at(yaml: string, list: 'auto_approve' | 'auto_deny', rule: string): string {
  const lines = yaml.split('\n');
  const line = lines.findIndex((l) => l.trimStart().startsWith(`${list}:`));
  return `forge.yaml:${line + 1}:${lines[line].indexOf(JSON.stringify(rule)) + 1}`;
}

/** The diagnostic whose first line starts with `head` (after its ▲/✘), up to the next one. */
function diagnostic(output: string, head: string): string | undefined {
  return output.split(/\n(?=[▲✘] )/).find((block) => block.slice(2).startsWith(head));
}

describe('check-approval-rules', () => {
  it('forge validate reports each misspelt name:, tag: and category: rule at its line:column with the one it likely is', async () => {
    const yaml = config(['tag:read', 'name:slugfy', 'tag:txet', 'category:custon', 'name:slug*'], ['name:save_not', 'tag:wirte', 'category:custon', 'name:nothing_like_it', 'tag:nottes']);
    const project = writeProject({ 'forge.yaml': yaml, ...TOOLS });
    const { code, stdout, stderr } = await forge(['validate'], project);
    const output = stdout + stderr;
    const expected: [string, 'auto_approve' | 'auto_deny', string, string, string][] = [
      // [severity, list, rule, message after "matches no tool: ", hint]
      ['▲', 'auto_approve', 'name:slugfy', 'no tool is named "slugfy"', 'did you mean "name:slugify"?'],
      ['▲', 'auto_approve', 'tag:txet', 'no tool is tagged "txet"', 'did you mean "tag:text"?'],
      ['▲', 'auto_approve', 'category:custon', '"custon" is not a category', 'did you mean "category:custom"?'],
      // A deny rule one slip from a tool this agent has: that tool would run unrefused.
      ['✘', 'auto_deny', 'name:save_not', 'no tool is named "save_not", so "save_note" is not refused', 'did you mean "name:save_note"?'],
      ['✘', 'auto_deny', 'tag:wirte', 'no tool is tagged "wirte", so what is tagged "write" is not refused', 'did you mean "tag:write"?'],
      ['✘', 'auto_deny', 'category:custon', '"custon" is not a category, so what is in "custom" is not refused', 'did you mean "category:custom"?'],
      ['✘', 'auto_deny', 'tag:nottes', 'no tool is tagged "nottes", so what is tagged "notes" is not refused', 'did you mean "tag:notes"?'],
      ['▲', 'auto_deny', 'name:nothing_like_it', 'no tool is named "nothing_like_it"', 'a rule names a tool (name:), a tag (tag:) or a category (category:builtin|adapter|dev|custom); forge tool list shows them'],
    ];
    for (const [mark, list, rule, message, hint] of expected) {
      const found = diagnostic(output, `${at(yaml, list, rule)} FORGE_APPROVAL_UNMATCHED ${list} rule "${rule}" matches no tool: ${message}\n`);
      expect(found, `${list} ${rule}\n${output}`).toBeDefined();
      expect(found!.startsWith(mark), found).toBe(true);
      expect(found).toContain(`hint: ${hint}`);
    }
    // Rules that match a tool (the glob too) are not reported.
    for (const rule of ['tag:read', 'name:slug*']) expect(output).not.toContain(`rule "${rule}"`);
    expect(code, output).toBe(1);
  });

  it('a dev build warns of misspelt auto_approve rules, of unmatched globs and deny rules naming nothing this agent has, and succeeds', async () => {
    // No write tool here: tag:wirte is still misspelt, but nothing it was meant to refuse exists.
    const tools = { 'tools/slugify.ts': TOOLS['tools/slugify.ts'] };
    const yaml = config(['tag:read', 'name:slugfy', 'name:github__*'], ['tag:wirte', 'name:local_shel']);
    const project = writeProject({ 'forge.yaml': yaml, ...tools });
    const { code, stdout, stderr } = await forge(['build'], project);
    const output = stdout + stderr;
    expect(code, output).toBe(0);
    expect(diagnostic(output, `${at(yaml, 'auto_approve', 'name:slugfy')} FORGE_APPROVAL_UNMATCHED auto_approve rule "name:slugfy" matches no tool: no tool is named "slugfy"\n`)).toMatch(/^▲[\s\S]*hint: did you mean "name:slugify"\?/);
    expect(diagnostic(output, `${at(yaml, 'auto_approve', 'name:github__*')} FORGE_APPROVAL_UNMATCHED auto_approve rule "name:github__*" matches no tool\n`)).toMatch(/^▲[\s\S]*hint: it approves nothing until a tool it matches is added/);
    expect(diagnostic(output, `${at(yaml, 'auto_deny', 'tag:wirte')} FORGE_APPROVAL_UNMATCHED auto_deny rule "tag:wirte" matches no tool: no tool is tagged "wirte"\n`)).toMatch(/^▲[\s\S]*hint: did you mean "tag:write"\?/);
    // local_shell is shipped with Forge but not enabled here: a warning, not an error.
    expect(diagnostic(output, `${at(yaml, 'auto_deny', 'name:local_shel')} FORGE_APPROVAL_UNMATCHED auto_deny rule "name:local_shel" matches no tool: no tool is named "local_shel"\n`)).toMatch(/^▲[\s\S]*hint: did you mean "name:local_shell"\?/);
    expect(existsSync(join(project, '.forge-output', 'agent.json'))).toBe(true);
  });

  it('a build refuses an auto_deny rule misspelling a tool the agent has, and writes no output', async () => {
    const yaml = config(['tag:read'], ['name:local_shel'], 'tools: [local_shell]\n');
    const project = writeProject({ 'forge.yaml': yaml, ...TOOLS });
    const { code, stdout, stderr } = await forge(['build'], project);
    const output = stdout + stderr;
    expect(code, output).toBe(1);
    expect(diagnostic(output, `${at(yaml, 'auto_deny', 'name:local_shel')} FORGE_APPROVAL_UNMATCHED auto_deny rule "name:local_shel" matches no tool: no tool is named "local_shel", so "local_shell" is not refused\n`)).toMatch(/^✘[\s\S]*hint: did you mean "name:local_shell"\?/);
    expect(existsSync(join(project, '.forge-output'))).toBe(false);
  });

  it('reports nothing for rules naming dev tools a --prod build strips, shipped tools not enabled, security tags no tool has yet, or categories', async () => {
    // name:slugfy is the one misspelt rule: it shows that the rules were checked, and is all that is reported.
    const yaml = config(['tag:read', 'name:dev_probe', 'category:dev', 'category:adapter', 'tag:notes', 'name:slugfy'], ['name:local_shell', 'name:dev_probe', 'name:http_request', 'tag:run', 'name:save_*']);
    const project = writeProject({ 'forge.yaml': yaml, ...TOOLS });
    const built = await forge(['build', '--prod'], project);
    const validated = await forge(['validate'], project);
    for (const { code, stdout, stderr } of [built, validated]) {
      const output = stdout + stderr;
      expect(code, output).toBe(0);
      expect(output.match(/FORGE_APPROVAL_UNMATCHED .*/g), output).toEqual(['FORGE_APPROVAL_UNMATCHED auto_approve rule "name:slugfy" matches no tool: no tool is named "slugfy"']);
    }
  });
});
