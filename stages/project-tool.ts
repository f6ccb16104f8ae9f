/**
 * A tool as the build sees it: its spec, and where it came from (a source
 * file, or a tool shipped with Forge and enabled in forge.yaml).
 */
import type { Diagnostic } from '../runtime/diagnostics.ts';
import type { Location } from '../runtime/diagnostics.ts';
import type { BuiltinDefinition } from '../runtime/tools/builtin/define.ts';
import type { CatalogEntry } from '../runtime/tools/catalog.ts';
import type { ToolSpec } from '../runtime/tools/model.ts';
import type { SourceFile } from './discover-tools.ts';
import type { YamlToolFacts } from './parse-docstrings.ts';

export interface ProjectTool {
  spec: ToolSpec;
  /** Names the tool's source in messages: a file path, or "forge.yaml:12:5 (builtin)". */
  origin: string;
  at: Location;
  /** Where each name of a docstring's `Composed Of:` is written (diagnostics about a name point there). */
  composedOfAt?: Record<string, Location>;
  file?: SourceFile;
  /**
   * Who wrote the tool's schemas: Forge, from a docstring (`generated`);
   * Forge, by hand, for a tool it ships (`forge`, compiled by Forge's own
   * tests); or someone else — an MCP server, an OpenAPI document (`external`,
   * compiled by the build).
   */
  schemaOrigin: 'generated' | 'forge' | 'external';
  builtin?: { entry: CatalogEntry; definition: BuiltinDefinition<any> };
  /** YAML tools: the loaded definition and how to point into the file. */
  yaml?: YamlToolFacts;
  /** Why the tool is not registered on this machine (a YAML tool made for other platforms). */
  unavailable?: string;
  /** Why the tool cannot load (a builtin with a bad config value): it stays listed and each call answers with this. */
  loadErrors?: Diagnostic[];
  /** A tool from the user or global scope, brought in because a project tool needs it. */
  scope?: 'user' | 'global';
}

export function byName(a: ProjectTool, b: ProjectTool): number {
  return a.spec.name < b.spec.name ? -1 : a.spec.name > b.spec.name ? 1 : 0;
}
