/**
 * The parsed docstrings of a project's tool files, kept in Forge's
 * machine-wide cache (project-cache.ts): what parsing a file gave (its
 * ToolSpec, where its names are, its diagnostics) is filed under the file's
 * sha256 and paths, made by the compiled CLI's own parser. A command that
 * loads the project (a build after an edit, a build with .forge/ removed,
 * `forge tool list`, `validate`, `tool run`) parses only the files that
 * changed since: parsing is the largest part of loading a 200-tool project
 * (about 35 ms of a cold build's 220). Every such command parses every file,
 * so the entries a command did not use (files gone) are dropped.
 */
import { compiledCliBuild, openProjectCache, type ProjectCache } from './project-cache.ts';
import { defaultCacheDir } from './forge-paths.ts';

export type DocstringCache<Entry> = ProjectCache<Entry>;

/** The cache of the project at `root`, or undefined when this process is not the compiled CLI. */
export function openDocstringCache<Entry>(root: string, cacheDir: string = defaultCacheDir(), parser: string | undefined = compiledCliBuild()): DocstringCache<Entry> | undefined {
  return openProjectCache<Entry>('docstrings', root, parser, { cacheDir });
}
