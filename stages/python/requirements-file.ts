/**
 * A project's requirements.txt: one requirement per line, `#` comments.
 * pip options (-r, -e, --index-url …) are not requirements: they are
 * reported, since the image build would not see what they point to.
 */
import { warning, type Diagnostic } from '../../runtime/diagnostics.ts';
import { requirementName } from '../../runtime/tools/custom/python-requirement.ts';

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
    if (!requirementName(line)) {
      diagnostics.push(warning('FORGE_PY_REQUIREMENTS', `"${line}" is not a requirement`, { file, line: i + 1, column: 1, lineText: raw }));
      return;
    }
    requirements.push(line);
  });
  return { requirements, diagnostics };
}
