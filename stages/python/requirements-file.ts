/**
 * A project's requirements.txt: one requirement per line, `#` comments, and
 * a line that ends with a backslash continued on the next (as pip-compile
 * writes each requirement with its hashes). pip options (-r, -e,
 * --index-url …) are not requirements: they are reported, since the image
 * build would not see what they point to.
 *
 * A requirement's `--hash=` options are left out, with one warning: Forge
 * installs these with the tools' own declared dependencies, which carry no
 * hashes, and pip checks hashes only when every requirement has them.
 */
import { warning, type Diagnostic } from '../../runtime/diagnostics.ts';
import { requirementProblem } from './pep508.ts';

const HASH_OPTIONS = /(?:\s+--hash=[A-Za-z0-9]+:[A-Za-z0-9+/=_-]+)+$/;

export function readRequirementsFile(text: string, file: string): { requirements: string[]; diagnostics: Diagnostic[] } {
  const requirements: string[] = [];
  const diagnostics: Diagnostic[] = [];
  let hashed = 0;
  for (const { text: raw, line: lineNumber, lineText } of logicalLines(text)) {
    const written = raw.replace(/(^|\s)#.*$/, '').trim();
    if (!written) continue;
    const at = { file, line: lineNumber, column: 1, lineText };
    if (written.startsWith('-')) {
      diagnostics.push(warning('FORGE_PY_REQUIREMENTS', `"${written}" is a pip option, not a requirement; it is ignored`, at, 'pass pip options through the environment instead (PIP_INDEX_URL, PIP_FIND_LINKS)'));
      continue;
    }
    const line = written.replace(HASH_OPTIONS, '');
    if (line !== written) hashed++;
    // What pip would read differently from the requirement written (options after it, a line break pip splits on, ${VAR}) is not passed on.
    const problem = requirementProblem(line);
    if (problem) {
      diagnostics.push(warning('FORGE_PY_REQUIREMENTS', `"${line}" is not a requirement (${problem}); it is ignored`, at));
      continue;
    }
    requirements.push(line);
  }
  if (hashed) {
    diagnostics.push(
      warning('FORGE_PY_REQUIREMENTS', `the --hash options of ${hashed} requirement${hashed === 1 ? '' : 's'} are left out: they are installed with the tools' declared dependencies, which have none, and pip checks hashes only when every requirement has them`, { file, line: 1, column: 1 }, 'pin exact versions (==) to install the same packages each time'),
    );
  }
  return { requirements, diagnostics };
}

/** The file's lines with backslash continuations joined, each with the number and text of the line it starts on. */
function logicalLines(text: string): { text: string; line: number; lineText: string }[] {
  const out: { text: string; line: number; lineText: string }[] = [];
  let pending: { text: string; line: number; lineText: string } | undefined;
  text.split(/\r?\n/).forEach((raw, i) => {
    // pip's rule: a line ending in a backslash goes on with the next, unless it is a comment line.
    const continued = raw.endsWith('\\') && !/^\s*#/.test(raw);
    const piece = continued ? raw.slice(0, -1) : raw;
    if (pending) pending.text += ` ${piece}`;
    else pending = { text: piece, line: i + 1, lineText: raw };
    if (!continued) {
      out.push(pending);
      pending = undefined;
    }
  });
  if (pending) out.push(pending);
  return out;
}
