/** The official Node.js binary of a release line or version (`22`, `20.10`), installed once from the npm registry. */
export function nodeLineBinary(line: number | string): string;
/** Where the binaries are kept. */
export const nodeLineCache: string;
