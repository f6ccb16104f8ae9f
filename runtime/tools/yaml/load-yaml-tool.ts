/**
 * Loads a YAML tool file at run time (the bundle's tools/, or a project's
 * tool_dirs): parse, read, refuse it if anything is wrong. Imported only
 * where YAML tools exist, so a bundle without them does not carry a YAML
 * parser.
 */
import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { parse } from '../../vendor/yaml.ts';
import type { Tool, ToolSpec } from '../model.ts';
import { platformMismatch, type YamlToolDefinition } from './definition.ts';
import { readYamlTool } from './read-definition.ts';
import { createYamlTool, type YamlToolHost } from './yaml-tool.ts';

/** A tool made for other platforms: left out of the registry, with a note rather than an error. */
export class NotForThisPlatform extends Error {
  constructor(tool: string, mismatch: string) {
    super(`tool "${tool}" ${mismatch}`);
    this.name = 'NotForThisPlatform';
  }
}

function loadYamlToolFile(file: string): YamlToolDefinition {
  const data: unknown = parse(readFileSync(file, 'utf8'));
  const { definition, problems } = readYamlTool(data, basename(file, extname(file)));
  if (!definition) {
    const errors = problems.items.filter((p) => p.severity === 'error');
    throw new Error(`${file}: ${errors.map((p) => `${p.path.join('.') || '(top)'}: ${p.message}`).join('; ')}`);
  }
  return definition;
}

export type YamlToolFactory = (spec: ToolSpec, file: string) => Tool;

/**
 * `loaded`: definitions already read and checked (a project loaded from
 * source), by tool name — the tool runs what was checked, without reading
 * the file again. Others (a bundle's) are read from their file.
 */
export function createYamlToolFactory(host: YamlToolHost, loaded: ReadonlyMap<string, YamlToolDefinition> = new Map()): YamlToolFactory {
  return (spec, file) => {
    const definition = loaded.get(spec.name) ?? loadYamlToolFile(file);
    const mismatch = platformMismatch(definition.platforms);
    if (mismatch) throw new NotForThisPlatform(spec.name, mismatch);
    return createYamlTool(spec, definition, host, file);
  };
}
