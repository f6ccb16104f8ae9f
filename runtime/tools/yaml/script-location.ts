/**
 * Where a line of a step's inline script is in its YAML file, at run time
 * (a Python error names a line of the temp file the script was written to).
 * Read only when such an error happens: the file is parsed again, with
 * positions.
 */
import { readFileSync } from 'node:fs';
import { isScalar, LineCounter, parseDocument } from '../../vendor/yaml.ts';
import type { PathSegment } from './definition.ts';

/**
 * The file line of each line `line` (1-based) of the string at `path`, the
 * file read and parsed once: a block scalar's content (`python: |`) starts
 * on the line after its header; a one-line string is on its own line.
 * Undefined when it cannot be told (no such string in the file, a quoted
 * string over several lines).
 */
export function linesInYamlFile(file: string, path: readonly PathSegment[]): (line: number) => number | undefined {
  try {
    const counter = new LineCounter();
    const node = parseDocument(readFileSync(file, 'utf8'), { lineCounter: counter }).getIn(path, true);
    if (!isScalar(node) || !node.range || typeof node.value !== 'string') return () => undefined;
    const start = counter.linePos(node.range[0]).line;
    if (node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED') return (line) => start + line;
    const oneLine = !node.value.includes('\n');
    return (line) => (oneLine && line === 1 ? start : undefined);
  } catch {
    return () => undefined;
  }
}
