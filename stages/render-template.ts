/**
 * Renders the files in templates/: `{{name}}` inserts a value, and a line
 * block between `{{#if name}}` and `{{/if}}` is kept only when the value is
 * truthy. Deliberately tiny: templates are ours, not users'.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { templatesDir } from './forge-paths.ts';

export type TemplateValues = Record<string, string | number | boolean | undefined>;

export function renderTemplate(text: string, values: TemplateValues): string {
  const kept = text.replace(/^[ \t]*\{\{#if (\w+)\}\}\n([\s\S]*?)^[ \t]*\{\{\/if\}\}\n/gm, (_, name: string, body: string) => (values[name] ? body : ''));
  return kept.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`template value "${name}" is missing`);
    return String(value);
  });
}

export function renderTemplateFile(relativePath: string, values: TemplateValues): string {
  return renderTemplate(readFileSync(join(templatesDir, relativePath), 'utf8'), values);
}
