/**
 * Reads one YAML tool file the way the build does: YAML syntax, then
 * schemas/tool.schema.json, then the tool reader the runtime uses — every
 * problem at file:line:column. Shared by the parse stage, the scopes and
 * `forge tool add`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import type { ErrorObject } from 'ajv';
import { error, hasErrors, warning, type Diagnostic, type Location } from '../runtime/diagnostics.ts';
import type { ToolSpec } from '../runtime/tools/model.ts';
import { currentPlatform, type DefinitionProblem, type YamlToolDefinition } from '../runtime/tools/yaml/definition.ts';
import { declaresTool, readYamlTool } from '../runtime/tools/yaml/read-definition.ts';
import { yamlToolSpec } from '../runtime/tools/yaml/yaml-tool.ts';
import toolSchema from '../schemas/tool.schema.json' with { type: 'json' };
import * as precompiled from './config/generated/yaml-tool-validator.mjs';
import { schemaErrorsToDiagnostics } from './config/schema-errors.ts';
import { YamlSource } from './config/yaml-source.ts';

export interface YamlToolFile {
  /** Undefined when the file is not a tool (data that travels with the tools) or has errors. */
  spec?: ToolSpec;
  definition?: YamlToolDefinition;
  /** Where the tool is declared (its name:, or the top of the file). */
  at?: Location;
  /** Turns a path into the file's data (+ an offset into the string there) into a location. */
  locate?: (path: readonly (string | number)[], offset?: number) => Location;
  /** Why this tool is not registered on this machine (made for other platforms). */
  unavailable?: string;
  sha256?: string;
  diagnostics: Diagnostic[];
}

let validateToolFile: ((data: unknown) => boolean) & { errors?: ErrorObject[] | null } | undefined;

async function toolFileValidator() {
  if (validateToolFile) return validateToolFile;
  const { $id: _id, ...schema } = toolSchema;
  if (precompiled.schemaHash === createHash('sha256').update(JSON.stringify(schema)).digest('hex')) {
    validateToolFile = precompiled.validate;
  } else {
    const { createAjv } = await import('../runtime/tools/validation.ts');
    const ajv = createAjv({ verbose: true });
    ajv.addKeyword({ keyword: 'x-hint' });
    validateToolFile = ajv.compile(schema);
  }
  return validateToolFile;
}

/**
 * `sourcePath` is what agent.json records as the tool's source until the
 * bundle stage rewrites it (relative to the project, or absolute for a scope).
 */
export async function readYamlToolFile(file: { absolute: string; display: string }, sourcePath: string): Promise<YamlToolFile> {
  let text: string;
  try {
    text = readFileSync(file.absolute, 'utf8');
  } catch (err) {
    return { diagnostics: [error('FORGE_TOOL_READ', `cannot read ${file.display}: ${(err as Error).message}`, { file: file.display })] };
  }
  return readYamlToolText(text, file.display, basename(file.absolute, extname(file.absolute)), sourcePath);
}

export async function readYamlToolText(text: string, display: string, defaultName: string, sourcePath: string): Promise<YamlToolFile> {
  const sha256 = createHash('sha256').update(text).digest('hex');
  const { source, diagnostics } = YamlSource.parse(display, text);
  if (hasErrors(diagnostics)) return { sha256, diagnostics };
  const data = source.toJS();
  if (!declaresTool(data)) {
    if (data && typeof data === 'object' && ('description' in data || 'parameters' in data)) {
      diagnostics.push(
        warning('FORGE_YAML_NO_STEP', 'this YAML file looks like a tool but has nothing to run; it is not registered as a tool', source.locate([]), 'add bash:, sh:, python:, run:, script: or steps:'),
      );
    }
    return { sha256, diagnostics };
  }
  const validate = await toolFileValidator();
  if (!validate(data)) {
    diagnostics.push(...schemaErrorsToDiagnostics(validate.errors ?? [], source, data, 'FORGE_YAML'));
    return { sha256, diagnostics };
  }
  const locate = (path: readonly (string | number)[], offset?: number) => (offset === undefined ? source.locate(path) : source.locateInString(path, offset));
  const { definition, problems } = readYamlTool(data, defaultName);
  diagnostics.push(...problems.items.map((p) => toDiagnostic(p, source, locate)));
  if (!definition) return { sha256, diagnostics };
  const at = source.locate(data && typeof data === 'object' && 'name' in data ? ['name'] : []);
  const result: YamlToolFile = { spec: yamlToolSpec(definition, { kind: 'yaml', path: sourcePath, sha256 }), definition, at, locate, sha256, diagnostics };
  if (definition.platforms && !definition.platforms.includes(currentPlatform())) {
    result.unavailable = `runs on ${definition.platforms.join(', ')}, not on ${currentPlatform()}`;
  }
  return result;
}

function toDiagnostic(p: DefinitionProblem, source: YamlSource, locate: NonNullable<YamlToolFile['locate']>): Diagnostic {
  const at = p.at === 'key' ? source.locate(p.path, 'key') : locate(p.path, p.offset);
  return p.severity === 'error' ? error(p.code, p.message, at, p.hint) : warning(p.code, p.message, at, p.hint);
}
