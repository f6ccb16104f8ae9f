/**
 * A forged tool as source for the project's tools/ (`forge tool promote`):
 * a composition becomes a YAML meta-tool, sandboxed code a JavaScript tool
 * with a docstring; its test cases are kept beside it (NAME.tests.json).
 */
import { stringify } from 'yaml';
import type { ForgedRecord } from '../runtime/tools/emergent/forged-store.ts';
import { composeDocument } from '../runtime/tools/emergent/compose-definition.ts';
import { readAllowlist } from '../runtime/tools/emergent/forged-tool.ts';

export interface SourceFile {
  /** Relative to the tool dir. */
  file: string;
  text: string;
}

export function forgedSources(record: ForgedRecord): SourceFile[] {
  const { request } = record;
  const tests: SourceFile = { file: `${request.name}.tests.json`, text: JSON.stringify({ tool: request.name, outputSchema: request.outputSchema, testCases: request.testCases, verdict: record.verdict }, null, 2) + '\n' };
  if (request.implementation.mode === 'compose') {
    const header = `# Forged by the running agent on ${record.forgedAt}, promoted with \`forge tool promote\`.\n# Test cases: ${request.name}.tests.json\n`;
    return [{ file: `${request.name}.yaml`, text: header + stringify(composeDocument(request)) }, tests];
  }
  return [{ file: `${request.name}.js`, text: javascriptTool(record) }, tests];
}

const DOC_TYPES: Record<string, string> = { string: 'str', number: 'float', integer: 'int', boolean: 'bool', array: 'list', object: 'dict' };

function javascriptTool(record: ForgedRecord): string {
  const { request } = record;
  if (request.implementation.mode !== 'sandbox') throw new Error('not sandboxed code');
  const allow = readAllowlist(request.implementation.allowlist);
  const properties = (request.inputSchema.properties ?? {}) as Record<string, { type?: string; description?: string }>;
  const required = (request.inputSchema.required ?? []) as string[];
  const inputs = Object.entries(properties).map(([name, schema]) => {
    const type = DOC_TYPES[schema.type ?? ''] ?? 'any';
    return ` *   ${name} (${type}${required.includes(name) ? '' : ', optional'}): ${oneLine(schema.description ?? name)}`;
  });
  const doc = [
    '/**',
    ` * Tool: ${request.name}`,
    ` * Description: ${oneLine(request.description)}`,
    ` * Tags: read, forged${allow.hosts.length ? ', network' : ''}`,
    ...(allow.tools.length ? [` * Composed Of: ${allow.tools.join(', ')}`] : []),
    ...(inputs.length ? [' *', ' * Input:', ...inputs] : []),
    ' */',
  ];
  return `${doc.join('\n')}
// Forged by the running agent on ${record.forgedAt}, promoted with \`forge tool promote\`.
// Test cases: ${request.name}.tests.json. As a source tool it runs like the project's
// other tools (no longer in the forge sandbox): review it as you would any code.

let context;
// What the forged code called through the sandbox's bridge, now through the tool's context.
const tools = {
  async call(name, args) {
    const result = await context.registry.execute(name, args ?? {});
    if (!result.ok) throw new Error(\`\${result.error.code}: \${result.error.message}\`);
    return result.value;
  },
};
const fetchText = async (url, init = {}) => {
  const response = await globalThis.fetch(url, init);
  return { status: response.status, headers: Object.fromEntries(response.headers), text: await response.text() };
};

const forged = ((fetch) => {
${request.implementation.code}
return execute;
})(fetchText);

export async function execute(input, ctx) {
  context = ctx;
  return forged(input);
}
`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/\*\//g, '* /').trim();
}
