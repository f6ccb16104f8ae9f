/**
 * A forged tool as source for the project's tools/ (`forge tool promote`):
 * a composition becomes a YAML meta-tool, sandboxed code a JavaScript tool
 * with a docstring; its test cases are kept beside it (NAME.tests.json).
 *
 * Sandboxed code leaves its sandbox when promoted, so it must not gain
 * authority silently: its fetch keeps the allowlist (forged-fetch-source.ts),
 * it is not tagged read (it is untagged: a call needs what a run tool
 * needs), and what no longer holds is said in the file and by the command
 * (sandbox-losses.ts).
 */
import { stringify } from 'yaml';
import type { ForgedRecord } from '../runtime/tools/emergent/forged-store.ts';
import { composeDocument } from '../runtime/tools/emergent/compose-definition.ts';
import { readAllowlist } from '../runtime/tools/emergent/forged-tool.ts';
import { docText, sectionLines } from './forged-docstring.ts';
import { allowlistedFetchSource } from './forged-fetch-source.ts';
import { keptNote, PROMOTED_HINT, SANDBOX_LOSSES } from './sandbox-losses.ts';

export interface SourceFile {
  /** Relative to the tool dir. */
  file: string;
  text: string;
}

export interface PromotedSources {
  files: SourceFile[];
  /** What the person promoting should know: the sandbox a promoted code tool left. */
  notice?: { message: string; details: string[]; hint: string };
}

export function forgedSources(record: ForgedRecord): PromotedSources {
  const { request } = record;
  const tests: SourceFile = { file: `${request.name}.tests.json`, text: JSON.stringify({ tool: request.name, outputSchema: request.outputSchema, testCases: request.testCases, verdict: record.verdict }, null, 2) + '\n' };
  if (request.implementation.mode === 'compose') {
    const header = `# Forged by the running agent on ${record.forgedAt}, promoted with \`forge tool promote\`.\n# Test cases: ${request.name}.tests.json\n`;
    return { files: [{ file: `${request.name}.yaml`, text: header + stringify(composeDocument(request)) }, tests] };
  }
  const allow = readAllowlist(request.implementation.allowlist);
  return {
    files: [{ file: `${request.name}.js`, text: javascriptTool(record, allow) }, tests],
    notice: {
      message: `${request.name} no longer runs in the forge sandbox: it is project code now, with full Node`,
      details: [...SANDBOX_LOSSES.map((loss) => `no longer enforced: ${loss}`), `still enforced: ${keptNote(allow.hosts)}`],
      hint: PROMOTED_HINT,
    },
  };
}

/** `allow`: the forged tool's allowlist, as forgedSources read it. */
function javascriptTool(record: ForgedRecord, allow: ReturnType<typeof readAllowlist>): string {
  const { request } = record;
  if (request.implementation.mode !== 'sandbox') throw new Error('not sandboxed code');
  const inputs = sectionLines(request.inputSchema, 'Input');
  const outputs = sectionLines(request.outputSchema, 'Output');
  const doc = [
    '/**',
    ` * Tool: ${request.name}`,
    ` * Description: ${docText(request.description)}`,
    // No read tag: the sandbox that made it safe to auto-approve is gone (see the note below).
    ` * Tags: forged${allow.hosts.length ? ', network' : ''}`,
    ...(allow.tools.length ? [` * Composed Of: ${allow.tools.join(', ')}`] : []),
    ...(inputs.length ? [' *', ' * Input:', ...inputs.map((line) => ` *   ${line}`)] : []),
    ...(outputs.length ? [' *', ' * Output:', ...outputs.map((line) => ` *   ${line}`)] : []),
    ' */',
  ];
  const note = [
    `Forged by the running agent on ${record.forgedAt}, promoted with \`forge tool promote\`.`,
    `Test cases: ${request.name}.tests.json.`,
    '',
    'UNSANDBOXED: this code was written by a model and checked in the forge sandbox.',
    'It now runs like the project\'s other tools, with full Node. No longer enforced:',
    ...SANDBOX_LOSSES.map((loss) => `  - ${loss}`),
    `Still enforced: ${keptNote(allow.hosts)}.`,
    `Not tagged read: ${PROMOTED_HINT}.`,
  ];
  return `${doc.join('\n')}
${note.map((line) => `// ${line}`.trimEnd()).join('\n')}

let context;
// What the forged code called through the sandbox's bridge, now through the tool's context
// (Composed Of above is what it may call, as the allowlist's tool: entries were).
const tools = {
  async call(name, args) {
    const result = await context.registry.execute(name, args ?? {});
    if (!result.ok) throw new Error(\`\${result.error.code}: \${result.error.message}\`);
    return result.value;
  },
};

${allowlistedFetchSource(allow.hosts)}
const forged = ((fetch) => {
${request.implementation.code}
return execute;
})(allowlistedFetch);

export async function execute(input, ctx) {
  context = ctx;
  return forged(input);
}
`;
}
