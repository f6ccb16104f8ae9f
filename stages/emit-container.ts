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
    base_image: manifest.runtime?.image ?? defaultBaseImage(),
    node_line: manifest.runtime?.node ?? DEFAULT_NODE_LINE,
    node_line_note: lineNote(manifest.runtime?.node ?? DEFAULT_NODE_LINE),
  };
  writer.write('Dockerfile', renderTemplateFile('bundle/Dockerfile', values));
  writer.write('.dockerignore', renderTemplateFile('bundle/dockerignore', values));
}

function lineNote(line: number): string {
  if (line === DEFAULT_NODE_LINE) return 'the active LTS line';
  const eol = END_OF_LIFE[line as NodeLine];
  return eol ? `end of life ${eol}` : 'not a supported line';
}
