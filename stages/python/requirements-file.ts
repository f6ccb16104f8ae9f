/**
 * A project's requirements.txt: one requirement per line, `#` comments.
 * pip options (-r, -e, --index-url …) are not requirements: they are
 * reported, since the image build would not see what they point to.
 */
import { warning, type Diagnostic } from '../../runtime/diagnostics.ts';
import { requirementProblem } from './pep508.ts';

export function readRequirementsFile(text: string, file: string): { requirements: string[]; diagnostics: Diagnostic[] } {
  const requirements: string[] = [];
  const diagnostics: Diagnostic[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/(^|\s)#.*$/, '').trim();
    if (!line) return;
    if (line.startsWith('-')) {
      diagnostics.push(warning('FORGE_PY_REQUIREMENTS', `"${line}" is a pip option, not a requirement; it is ignored`, { file, line: i + 1, column: 1, lineText: raw }, 'pass pip options through the environment instead (PIP_INDEX_URL, PIP_FIND_LINKS)'));
      return;
    }
    // What pip would read differently from the requirement written (options after it, a line break pip splits on, ${VAR}) is not passed on.
    const problem = requirementProblem(line);
    if (problem) {
      diagnostics.push(warning('FORGE_PY_REQUIREMENTS', `"${line}" is not a requirement (${problem}); it is ignored`, { file, line: i + 1, column: 1, lineText: raw }));
      return;
    }
    requirements.push(line);
  });
  return { requirements, diagnostics };
}
