/** Collects the problems found while loading a YAML tool, each at a path into the file's data. */
import type { DiagnosticCode } from '../../diagnostic-codes.ts';
import type { DefinitionProblem, PathSegment } from './definition.ts';
import { parseTemplate, type Template, type TemplateProblem } from './template.ts';

export class ProblemList {
  readonly items: DefinitionProblem[] = [];

  error(code: DiagnosticCode, message: string, path: PathSegment[], extra: { hint?: string; offset?: number; at?: 'key' } = {}): void {
    this.items.push({ severity: 'error', code, message, path, ...clean(extra) });
  }

  warning(code: DiagnosticCode, message: string, path: PathSegment[], extra: { hint?: string; offset?: number; at?: 'key' } = {}): void {
    this.items.push({ severity: 'warning', code, message, path, ...clean(extra) });
  }

  fromTemplate(code: DiagnosticCode, problems: readonly TemplateProblem[], path: PathSegment[]): void {
    for (const p of problems) this.error(code, p.message, path, { hint: p.hint, offset: p.offset });
  }

  /** Parses a string field as a template, reporting its problems at `path`. */
  template(source: string, path: PathSegment[], options: { env?: boolean } = {}): Template {
    const { template, problems } = parseTemplate(source, options);
    this.fromTemplate('FORGE_YAML_TEMPLATE', problems, path);
    return template;
  }

  get failed(): boolean {
    return this.items.some((p) => p.severity === 'error');
  }
}

function clean<T extends object>(extra: T): Partial<T> {
  return Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export { isRecord } from '../../is-record.ts';
