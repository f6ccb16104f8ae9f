/**
 * PEP 723 inline script metadata: a `# /// script` … `# ///` comment block
 * in a Python file whose content (each line without its leading "# ") is
 * TOML with `dependencies = [...]` (and optionally `requires-python`).
 * The block is found with the regular expression the specification gives.
 */
import { parse, TomlError } from 'smol-toml';
import { error, type Diagnostic } from '../../runtime/diagnostics.ts';
import { requirementProblem } from './pep508.ts';

export interface ScriptMetadata {
  dependencies: string[];
  requiresPython?: string;
  /** 1-based line of `# /// script`. */
  line: number;
}

const BLOCK = /^# \/\/\/ ([a-zA-Z0-9-]+)$\s((?:^#(?:| .*)$\s)+)^# \/\/\/$/gm;

export function readScriptMetadata(text: string, file: string): { metadata?: ScriptMetadata; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const blocks = [...text.matchAll(BLOCK)].filter((m) => m[1] === 'script');
  if (blocks.length === 0) return { diagnostics };
  const lineOf = (index: number) => text.slice(0, index).split('\n').length;
  if (blocks.length > 1) {
    diagnostics.push(error('FORGE_PY_METADATA', 'more than one `# /// script` block (PEP 723 allows one)', { file, line: lineOf(blocks[1].index!), column: 1 }, 'merge them into one block'));
    return { diagnostics };
  }
  const block = blocks[0];
  const line = lineOf(block.index!);
  const toml = block[2]
    .split('\n')
    .map((l) => (l.startsWith('# ') ? l.slice(2) : l.slice(1)))
    .join('\n');
  let data: Record<string, unknown>;
  try {
    data = parse(toml) as Record<string, unknown>;
  } catch (err) {
    const at = err instanceof TomlError ? { line: line + err.line, column: err.column + 2 } : { line };
    diagnostics.push(error('FORGE_PY_METADATA', `the \`# /// script\` block is not valid TOML: ${(err as Error).message.split('\n')[0]}`, { file, ...at }, 'write it as TOML, e.g. # dependencies = ["requests>=2"]'));
    return { diagnostics };
  }
  const deps = data.dependencies ?? [];
  if (!Array.isArray(deps) || deps.some((d) => typeof d !== 'string')) {
    diagnostics.push(error('FORGE_PY_METADATA', '`dependencies` must be a list of strings', { file, line: line + 1 + lineIndex(toml, 'dependencies'), column: 3 }, 'dependencies = ["requests>=2.31"]'));
    return { diagnostics };
  }
  // A dependency pip would not read as the requirement written is left out (it never reaches pip) and refused.
  const sites = stringSites(block[2], line + 1, lineIndex(toml, 'dependencies'));
  const accepted: string[] = [];
  (deps as string[]).forEach((dep, i) => {
    const problem = requirementProblem(dep);
    if (!problem) return void accepted.push(dep);
    const site = sites[i] ?? { line: line + 1 + lineIndex(toml, 'dependencies'), column: 3 };
    diagnostics.push(error('FORGE_PY_DEPENDENCY', `the dependency ${JSON.stringify(dep)} is not a PEP 508 requirement pip would read as written: ${problem}`, { file, ...site }, 'write a package requirement, e.g. "requests>=2.31"; give pip its sources through the environment (PIP_INDEX_URL, PIP_FIND_LINKS), not in a dependency'));
  });
  const metadata: ScriptMetadata = { dependencies: accepted, line };
  if (typeof data['requires-python'] === 'string') metadata.requiresPython = data['requires-python'];
  return { metadata, diagnostics };
}

/** Where each string literal of the block starts, from the `dependencies` line on (1-based file line and column). */
function stringSites(blockText: string, firstLine: number, fromIndex: number): { line: number; column: number }[] {
  const sites: { line: number; column: number }[] = [];
  blockText.split('\n').forEach((text, i) => {
    if (i < fromIndex) return;
    for (const m of text.matchAll(/"(?:[^"\\]|\\.)*"|'[^']*'/g)) sites.push({ line: firstLine + i, column: m.index + 1 });
  });
  return sites;
}

function lineIndex(toml: string, key: string): number {
  const index = toml.split('\n').findIndex((l) => l.trimStart().startsWith(key));
  return Math.max(0, index);
}
