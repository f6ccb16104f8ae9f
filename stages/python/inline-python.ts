/**
 * The Python a project's YAML tools write inline (`python:` steps), as the
 * source check reads it: the script with each placeholder stood in for by a
 * name of its length, and `{{` `}}` by a brace and a space, so that every
 * line and column Python reports is the same in the YAML string, and from
 * there in the file. A name is valid Python wherever the value's literal is
 * (code), and plain text inside a string or a comment, so a syntax error in
 * this text is one in every call's script (unless a {RAW:...} placeholder,
 * which may insert any code, is in it: then only the imports are read).
 */
import type { Location } from '../../runtime/diagnostics.ts';
import { references, type Template } from '../../runtime/tools/yaml/template.ts';
import type { YamlToolFacts } from '../parse-docstrings.ts';
import type { InlinePython } from './python-source-check.ts';

export function inlinePython(tools: readonly { yaml?: YamlToolFacts }[]): InlinePython[] {
  const scripts: InlinePython[] = [];
  for (const tool of tools) {
    const yaml = tool.yaml;
    if (!yaml) continue;
    for (const step of yaml.definition.steps) {
      if (step.action.kind !== 'python') continue;
      const { template } = step.action.script;
      const key = [...step.path, 'python'];
      scripts.push({
        text: pythonReadable(template),
        locate: (line, column): Location => yaml.locate(key, offsetOf(template.source, line, column)),
        checkSyntax: !references(template).some((segment) => segment.raw),
      });
    }
  }
  return scripts;
}

function pythonReadable(template: Template): string {
  let text = template.source;
  for (const segment of template.segments) {
    if (segment.kind === 'text') continue;
    text = text.slice(0, segment.offset) + '_'.repeat(segment.length) + text.slice(segment.offset + segment.length);
  }
  return text.replaceAll('{{', '{ ').replaceAll('}}', ' }');
}

/** The offset in `text` of a 1-based line and column. */
function offsetOf(text: string, line: number, column: number): number {
  let offset = 0;
  for (let i = 1; i < line; i++) offset = text.indexOf('\n', offset) + 1;
  return offset + column - 1;
}
