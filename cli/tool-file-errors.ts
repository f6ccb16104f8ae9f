/**
 * Errors reported in tool files, grouped by the tool each file is: the name
 * the caller already knows for the file, else the one it declares (`Tool:`
 * in a docstring, `name:` in YAML), else its file's stem. A tool whose file
 * has errors is not in the project, or is there twice; this is how the
 * commands that name it (`forge tool run`, hot reload) find out why.
 */
import { basename, extname, resolve } from 'node:path';
import type { Diagnostic } from '../runtime/diagnostics.ts';
import { declaredToolName } from '../stages/declared-tool-name.ts';
import type { Project } from '../stages/load-project.ts';

export function errorsByToolName(project: Project, diagnostics: readonly Diagnostic[], knownName: (file: string) => string | undefined = () => undefined): Map<string, Diagnostic[]> {
  const toolDirs = project.config.toolDirs.map((d) => d.absolute);
  const byName = new Map<string, Diagnostic[]>();
  for (const d of diagnostics) {
    if (d.severity !== 'error' || !d.file) continue;
    const file = [resolve(project.config.root, d.file), resolve(process.cwd(), d.file)].find((f) => toolDirs.some((dir) => f.startsWith(dir + '/')));
    if (!file) continue;
    const name = knownName(file) ?? declaredName(file) ?? basename(file, extname(file));
    byName.set(name, [...(byName.get(name) ?? []), d]);
  }
  return byName;
}

/** The name the file declares (stages/declared-tool-name.ts): YAML by its `name:`, the others by a docstring's `Tool:` line. */
function declaredName(file: string): string | undefined {
  return declaredToolName({ absolute: file, kind: /\.ya?ml$/.test(file) ? 'yaml' : 'python' });
}
