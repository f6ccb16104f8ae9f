/**
 * Stage: parse docstrings. Reads each candidate file, finds its docstring
 * and turns it into a ToolSpec. Files without a `Tool:` docstring are
 * support files (helpers, data) and travel with the tools.
 */
import { createHash } from 'node:crypto';
import { error, hasErrors, warning, type Diagnostic, type Location } from '../runtime/diagnostics.ts';
import type { ToolSpec } from '../runtime/tools/model.ts';
import type { YamlToolDefinition } from '../runtime/tools/yaml/definition.ts';
import { definesExecute, extractPythonDocstring, extractScriptDocstring, scriptToolProblem } from '../runtime/tools/custom/docstring-source.ts';
import { parseDocstring } from '../runtime/tools/custom/docstring.ts';
import { sourceBytes, type SourceFile } from './discover-tools.ts';
import { holdsPrivateKey } from './check-secret-files.ts';
import type { StageContext } from './stage.ts';
import type { ProjectCache } from './project-cache.ts';

export interface ParsedTool {
  spec: ToolSpec;
  file: SourceFile;
  /** Where the tool is declared (its `Tool:` line). */
  at: Location;
  /** Where each name of its `Composed Of:` is written. */
  composedOfAt?: Record<string, Location>;
  /** YAML tools: the loaded definition and how to point into the file. */
  yaml?: YamlToolFacts;
  /** Why the tool is not registered on this machine (a YAML tool for other platforms). */
  unavailable?: string;
}

export interface YamlToolFacts {
  definition: YamlToolDefinition;
  locate(path: readonly (string | number)[], offset?: number): Location;
}

export interface ParsedSources {
  tools: ParsedTool[];
  /** Files that are not tools but ship with them (Python helpers, data files). */
  supportFiles: SourceFile[];
}

/**
 * `cache`: what earlier commands parsed, kept in Forge's machine-wide cache (project-cache.ts, kind
 * `docstrings`): what parsing a file gave (its ToolSpec, where its names are, its diagnostics) filed under
 * the file's sha256 and paths, made by the compiled CLI's own parser. A file whose text and paths it has is
 * not parsed again: parsing was the largest part of loading a 200-tool project. Every command that loads the
 * project parses every file, so the entries a command did not use (files gone) are dropped.
 */
export function parseDocstrings(files: readonly SourceFile[], ctx: StageContext, cache?: ProjectCache<CachedParse>): ParsedSources {
  const tools: ParsedTool[] = [];
  const supportFiles: SourceFile[] = [];
  for (const file of files) {
    if (file.kind === 'yaml') continue; // parse-yaml-tools reads these
    if (file.kind === 'other') {
      supportFiles.push(file);
      continue;
    }
    const parsed = parseToolFile(file, cache);
    file.sha256 = parsed.sha256;
    file.content = parsed.content;
    file.privateKey = parsed.privateKey;
    ctx.report(...parsed.diagnostics);
    // A tool whose declaration has errors is left out rather than registered half-right.
    if (parsed.spec && hasErrors(parsed.diagnostics)) continue;
    if (parsed.spec) tools.push({ spec: parsed.spec, file, at: { file: file.display, ...parsed.nameAt }, ...(parsed.composedOfAt ? { composedOfAt: parsed.composedOfAt } : {}) });
    else if (file.kind === 'python') supportFiles.push(file);
  }
  cache?.save();
  return { tools, supportFiles };
}

/** What a file's parse gave, as the docstring cache keeps it: a function of its text and paths alone. */
export type CachedParse = ParsedToolFile & { privateKey: boolean };

/** One file → its ToolSpec (undefined when the file declares no tool). */
export function parseToolFile(file: Pick<SourceFile, 'absolute' | 'relative' | 'display' | 'kind' | 'content'>, cache?: ProjectCache<CachedParse>): ParsedToolFile & { privateKey?: boolean; content?: Buffer } {
  let content: Buffer;
  try {
    content = sourceBytes(file);
  } catch (err) {
    return { diagnostics: [error('FORGE_TOOL_READ', `cannot read ${file.display}: ${(err as Error).message}`, { file: file.display })] };
  }
  const text = content.toString('utf8');
  const sha256 = createHash('sha256').update(text).digest('hex');
  // The paths are in the result (the source's path, each diagnostic's file), so they are in the key.
  const key = JSON.stringify([sha256, file.kind, file.relative, file.display]);
  const cached = cache?.get(key);
  // Only an entry in the shape a parse gives (the file is ours, but it is a file): anything else is parsed again.
  if (cached && Array.isArray(cached.diagnostics) && typeof cached.privateKey === 'boolean' && cached.sha256 === sha256) return { ...cached, content };
  // The secret check needs the content too: judged here, the file is read once.
  const parsed: CachedParse = { ...parseToolText(text, file, sha256), privateKey: holdsPrivateKey(text) };
  cache?.set(key, parsed);
  return { ...parsed, content };
}

type ParsedToolFile = { spec?: ToolSpec; nameAt?: { line: number; column: number; lineText: string }; composedOfAt?: Record<string, Location>; sha256?: string; diagnostics: Diagnostic[] };

function parseToolText(text: string, file: Pick<SourceFile, 'relative' | 'display' | 'kind'>, sha256: string): ParsedToolFile {
  const kind = file.kind as 'python' | 'typescript' | 'javascript';
  const extracted = kind === 'python' ? extractPythonDocstring(text) : extractScriptDocstring(text);
  if (extracted.kind === 'none') return { sha256, diagnostics: [] };
  if (extracted.kind === 'unterminated') {
    return { sha256, diagnostics: [error('FORGE_DOCSTRING_SYNTAX', 'the docstring is never closed', { file: file.display, line: extracted.line, column: extracted.column, lineText: text.split(/\r?\n/)[extracted.line - 1] }, kind === 'python' ? 'close it with """' : 'close it with */')] };
  }
  const { tool, diagnostics } = parseDocstring(extracted.docstring, file.display);
  if (!tool) return { sha256, diagnostics };
  const spec: ToolSpec = {
    name: tool.name,
    description: tool.description,
    category: tool.category,
    inputSchema: tool.inputSchema,
    tags: tool.tags,
    source: {
      kind,
      path: file.relative,
      sha256,
      style: definesExecute(kind, text) ? 'execute' : 'script',
    },
  };
  if (tool.outputSchema) spec.outputSchema = tool.outputSchema;
  if (tool.timeoutMs !== undefined) spec.timeoutMs = tool.timeoutMs;
  if (tool.composedOf) spec.composedOf = tool.composedOf;
  if (tool.singleConfirmation) spec.singleConfirmation = true;
  if (spec.source!.style === 'script') {
    const problem = scriptToolProblem(kind, text, Object.keys(tool.inputSchema.properties ?? {}).length > 0);
    if (problem) diagnostics.push(warning(problem.code, problem.message, { file: file.display, line: problem.line, column: problem.column }, problem.hint));
  }
  if (tool.compositionAt && (kind === 'python' || spec.source!.style !== 'execute')) {
    // Sub-tool calls go through the worker protocol, which the Node worker speaks.
    diagnostics.push(
      error('FORGE_DOCSTRING_COMPOSED', 'only a TypeScript or JavaScript tool that exports execute(args, ctx) can call other tools', { file: file.display, ...tool.compositionAt }, kind === 'python' ? 'write the composed tool in TypeScript, or as a YAML tool with tool: steps' : 'export execute(args, ctx) and call ctx.registry.execute(name, args)'),
    );
  }
  return { spec, nameAt: tool.nameAt, ...(tool.composedOfAt ? { composedOfAt: tool.composedOfAt } : {}), sha256, diagnostics };
}
