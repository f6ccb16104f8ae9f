/**
 * The name a tool file declares, read from its text without loading it: a
 * YAML tool's top-level `name:` (else its file name, as the loader takes it),
 * a Python or TypeScript tool's docstring `Tool:` line. For a file that does
 * not load, this is how a message can still say which tool it is.
 */
import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import type { SourceFile } from './discover-tools.ts';

const NAME = '([A-Za-z0-9_-]{1,64})';
const YAML_NAME = new RegExp(`^name:\\s*["']?${NAME}["']?\\s*(?:#.*)?$`, 'm');
// `Tool: x` in a Python docstring, or ` * Tool: x` in a TypeScript one.
const DOCSTRING_NAME = new RegExp(`^[\\s*]*Tool:\\s*${NAME}\\s*$`, 'm');

export function declaredToolName(file: Pick<SourceFile, 'absolute' | 'kind'>): string | undefined {
  let text: string;
  try {
    text = readFileSync(file.absolute, 'utf8');
  } catch {
    return undefined;
  }
  if (file.kind === 'yaml') return YAML_NAME.exec(text)?.[1] ?? basename(file.absolute, extname(file.absolute));
  return DOCSTRING_NAME.exec(text)?.[1];
}
