/**
 * Where a declared Python package is written: its line in a tool's
 * `# /// script` block or in requirements.txt. A package pip cannot install
 * is reported there, so the person reads which line to fix (or which
 * package to make available) instead of only a package name.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Location } from '../../runtime/diagnostics.ts';
import { distributionKey, normalizeDistribution } from '../../runtime/tools/custom/python-requirement.ts';

/** `declaredIn`: the file as agent.json's `python.declared_in` names it (relative to the project root). */
export function declarationSite(root: string, declaredIn: string, requirement: string, cwd = process.cwd()): Location {
  const absolute = join(root, declaredIn);
  const file = relative(cwd, absolute) || absolute;
  let lines: string[];
  try {
    lines = readFileSync(absolute, 'utf8').split('\n');
  } catch {
    return { file };
  }
  // In a Python file only the comment block declares packages: an import of the same name is no declaration.
  const declaring = (line: string) => !absolute.endsWith('.py') || line.startsWith('#');
  // The package's name as a whole word, compared as pip compares names: "six" is not "sixel".
  const wanted = distributionKey(requirement);
  for (const [index, line] of lines.entries()) {
    if (!declaring(line)) continue;
    for (const word of line.matchAll(/[A-Za-z0-9][A-Za-z0-9._-]*/g)) {
      if (normalizeDistribution(word[0]) === wanted) return { file, line: index + 1, column: word.index + 1, lineText: line };
    }
  }
  return { file };
}
