/**
 * Stage: parse YAML tools. Every .yaml/.yml file in a tool_dir that
 * declares a step is a tool; any other YAML file is data that travels with
 * the tools.
 */
import { hasErrors } from '../runtime/diagnostics.ts';
import type { SourceFile } from './discover-tools.ts';
import type { ParsedSources, ParsedTool } from './parse-docstrings.ts';
import type { StageContext } from './stage.ts';
import type { YamlToolFile } from './yaml-tool-file.ts';

export async function parseYamlTools(files: readonly SourceFile[], parsed: ParsedSources, ctx: StageContext): Promise<ParsedSources> {
  const yamlFiles = files.filter((f) => f.kind === 'yaml');
  if (yamlFiles.length === 0) return { tools: [...parsed.tools], supportFiles: [...parsed.supportFiles] };
  // The YAML tool grammar, and the runtime's step machinery it checks against, load only for a project with YAML files.
  const { readYamlToolFile } = await import('./yaml-tool-file.ts');
  const read = await Promise.all(yamlFiles.map((file) => readYamlToolFile(file, file.relative)));
  const tools = [...parsed.tools];
  const supportFiles = [...parsed.supportFiles];
  yamlFiles.forEach((file, i) => {
    const result = read[i];
    if (result.sha256) file.sha256 = result.sha256;
    file.privateKey = result.privateKey;
    ctx.report(...result.diagnostics);
    const tool = toParsedTool(file, result);
    if (tool) tools.push(tool);
    else if (!hasErrors(result.diagnostics)) supportFiles.push(file);
  });
  return { tools, supportFiles };
}

/** The tool a YAML file declares, as the later stages see it; undefined for a data file or one with errors. */
export function toParsedTool(file: SourceFile, result: YamlToolFile): ParsedTool | undefined {
  if (!result.spec) return undefined;
  const tool: ParsedTool = { spec: result.spec, file, at: result.at, yaml: { definition: result.definition, locate: result.locate } };
  if (result.unavailable) tool.unavailable = result.unavailable;
  return tool;
}
