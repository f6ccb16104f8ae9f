/**
 * Reads one YAML tool file the way the build does: YAML syntax, then
 * schemas/tool.schema.json, then the tool reader the runtime uses — every
 * problem at file:line:column. Shared by the parse stage, the scopes and
 * `forge tool add`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { holdsPrivateKey } from './check-secret-files.ts';
import { basename, extname } from 'node:path';
import { error, hasErrors, warning, type Diagnostic, type Location } from '../runtime/diagnostics.ts';
import type { ToolSpec } from '../runtime/tools/model.ts';
import { platformMismatch, type DefinitionProblem, type YamlToolDefinition } from '../runtime/tools/yaml/definition.ts';
import { isRecord } from '../runtime/tools/yaml/problems.ts';
import { declaresTool, readYamlTool } from '../runtime/tools/yaml/read-definition.ts';
import { yamlToolSpec } from '../runtime/tools/yaml/yaml-tool.ts';
import { translateForeignTool } from '../runtime/tools/yaml/foreign-grammar.ts';
import toolSchema from '../schemas/tool.schema.json' with { type: 'json' };
import * as precompiled from './config/generated/yaml-tool-validator.mjs';
import { schemaErrorsToDiagnostics } from './config/schema-errors.ts';
import { schemaValidator } from './config/schema-validator.ts';
import { YamlSource } from './config/yaml-source.ts';
import type { YamlToolFacts } from './parse-docstrings.ts';

/** A file that is a tool without errors has all of spec, definition, at and locate; any other has none. */
export type YamlToolFile = { sha256?: string; privateKey?: boolean; diagnostics: Diagnostic[] } & (
  | { spec?: undefined }
  | {
      spec: ToolSpec;
      definition: YamlToolDefinition;
      /** Where the tool is declared (its name:, or the top of the file). */
      at: Location;
      /** Turns a path into the file's data (+ an offset into the string there) into a location. */
      locate: YamlToolFacts['locate'];
      /** Why this tool is not registered on this machine (made for other platforms). */
      unavailable?: string;
    }
);

/** schemas/tool.schema.json's validator: precompiled at install, compiled here only if the schema changed since. */
const toolFileValidator = schemaValidator(toolSchema, precompiled);

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
  // The secret check needs the content too: judged here, the file is read once.
  return { ...(await readYamlToolText(text, file.display, basename(file.absolute, extname(file.absolute)), sourcePath)), privateKey: holdsPrivateKey(text) };
}

export async function readYamlToolText(text: string, display: string, defaultName: string, sourcePath: string): Promise<YamlToolFile> {
  const sha256 = createHash('sha256').update(text).digest('hex');
  const { source, diagnostics } = YamlSource.parse(display, text);
  if (hasErrors(diagnostics)) return { sha256, diagnostics };
  // CmdForge's and cycod's fields are aliases of Forge's: the schema checks what they stand for.
  const data = translateForeignTool(source.toJS());
  if (!declaresTool(data)) {
    if (isRecord(data) && ('description' in data || 'parameters' in data)) {
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
  const locate: YamlToolFacts['locate'] = (path, offset) => (offset === undefined ? source.locate(path) : source.locateInString(path, offset));
  const { definition, problems } = readYamlTool(data, defaultName);
  diagnostics.push(...problems.items.map((p) => toDiagnostic(p, source, locate)));
  if (!definition) return { sha256, diagnostics };
  const at = source.locate(isRecord(data) && 'name' in data ? ['name'] : []);
  const unavailable = platformMismatch(definition.platforms);
  return { spec: yamlToolSpec(definition, { kind: 'yaml', path: sourcePath, sha256 }), definition, at, locate, sha256, diagnostics, ...(unavailable ? { unavailable } : {}) };
}

function toDiagnostic(p: DefinitionProblem, source: YamlSource, locate: YamlToolFacts['locate']): Diagnostic {
  const at = p.at === 'key' ? source.locate(p.path, 'key') : locate(p.path, p.offset);
  return p.severity === 'error' ? error(p.code, p.message, at, p.hint) : warning(p.code, p.message, at, p.hint);
}
