/** Stage: emit the Dockerfile and .dockerignore that run the bundle in a container. */
import type { AgentManifest } from '../runtime/manifest.ts';
import { DEFAULT_NODE_LINE, END_OF_LIFE, defaultBaseImage, type NodeLine } from '../runtime/node-lines.ts';
import type { OutputWriter } from './output-writer.ts';
import { renderTemplateFile } from './render-template.ts';

export function emitContainer(manifest: AgentManifest, writer: OutputWriter): void {
  const values = {
    agent_id: manifest.agent_id,
    version: manifest.version,
    forge_version: manifest.build.forge_version,
    python: manifest.requirements.python !== undefined,
    python_dependencies: (manifest.python?.dependencies.length ?? 0) > 0,
    python_packages: manifest.python?.dependencies.length ? 'python3 python3-venv' : 'python3',
    mcp_packages: mcpPackages(manifest).join(' '),
    base_image: manifest.runtime?.image ?? defaultBaseImage(),
    node_line: manifest.runtime?.node ?? DEFAULT_NODE_LINE,
    node_line_note: lineNote(manifest.runtime?.node ?? DEFAULT_NODE_LINE),
  };
  writer.write('Dockerfile', renderTemplateFile('bundle/Dockerfile', values));
  writer.write('.dockerignore', renderTemplateFile('bundle/dockerignore', values));
}

/** The pinned packages of the agent's npx-started MCP servers (name@version, sorted). */
export function mcpPackages(manifest: AgentManifest): string[] {
  const pins = (manifest.mcp?.servers ?? []).flatMap((s) => (s.package ? [`${s.package.name}@${s.package.version}`] : []));
  return [...new Set(pins)].sort();
}

function lineNote(line: number): string {
  if (line === DEFAULT_NODE_LINE) return 'the active LTS line';
  const eol = END_OF_LIFE[line as NodeLine];
  return eol ? `end of life ${eol}` : 'not a supported line';
}
