// `npm run schemas:agent`: writes schemas/agent.schema.json, the JSON Schema
// of agent.json, from the AgentManifest type in runtime/manifest.ts and the
// types it references (doc comments become descriptions). The schema is
// exactly as strict as those types: objects are closed where the type is,
// and what the type leaves open (a tool's JSON Schemas, per-tool config,
// forge_tool's settings) stays open. test/stages/agent-schema.test.ts fails
// when the committed file is not what this writes.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createGenerator } from 'ts-json-schema-generator';

export const AGENT_SCHEMA_FILE = fileURLToPath(new URL('../schemas/agent.schema.json', import.meta.url));

/** The schema's text, as the committed file holds it. */
export function agentSchemaText(): string {
  const generated = createGenerator({
    path: fileURLToPath(new URL('../runtime/manifest.ts', import.meta.url)),
    tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)),
    type: 'AgentManifest',
    expose: 'export',
    // The root is the manifest itself (as in forge.schema.json), not a $ref to it.
    topRef: false,
    jsDoc: 'extended',
    // Declaration order, as in runtime/manifest.ts.
    sortProps: false,
    additionalProperties: false,
    // tsc (`npm run typecheck`) checks the sources; this only reads their types.
    skipTypeCheck: true,
  }).createSchema('AgentManifest');
  const { $schema: _draft, description, ...manifest } = generated as Record<string, unknown>;
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'https://forge.dev/schemas/agent.schema.json',
    title: 'agent.json',
    description,
    ...manifest,
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) writeFileSync(AGENT_SCHEMA_FILE, agentSchemaText());
