/** Stage: emit the Dockerfile and .dockerignore that run the bundle in a container. */
import type { AgentManifest } from '../runtime/manifest.ts';
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
  };
  writer.write('Dockerfile', renderTemplateFile('bundle/Dockerfile', values));
  writer.write('.dockerignore', renderTemplateFile('bundle/dockerignore', values));
}

/** The pinned packages of the agent's npx-started MCP servers (name@version, sorted). */
export function mcpPackages(manifest: AgentManifest): string[] {
  const pins = (manifest.mcp?.servers ?? []).flatMap((s) => (s.package ? [`${s.package.name}@${s.package.version}`] : []));
  return [...new Set(pins)].sort();
}
