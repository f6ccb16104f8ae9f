/**
 * Exact output, end to end: a probe corpus of values that trimming,
 * decoding or number parsing would change goes through four kinds of tool
 * that each print (or return) the value — a YAML tool, a Python script
 * tool, a Python execute() worker tool and a TypeScript tool — over REST
 * (`forge run --dev`, a real server) and the CLI (`forge tool run`), and
 * must come back byte for byte.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.ts';
import { forge, forgeBin, minimalConfig, writeProject } from '../helpers/project.ts';

export const PROBES: [string, string][] = [
  ['plain text', 'plain'],
  ['leading spaces', '  leading'],
  ['trailing spaces', 'trailing  '],
  ['a leading tab', '\tleading'],
  ['a trailing tab', 'trailing\t'],
  ['no trailing newline kept as is', 'none'],
  ['one trailing newline', 'one\n'],
  ['two trailing newlines', 'two\n\n'],
  ['three trailing newlines', 'three\n\n\n'],
  ['a leading newline', '\nleading newline'],
  ['CRLF at the end', 'crlf\r\n'],
  ['CRLF inside', 'a\r\nb'],
  ['a BOM', '\uFEFFbom'],
  ['an integer past 2^53', '12345678901234567890'],
  ['1e999', '1e999'],
  ['-0', '-0'],
  ['a decimal with more digits than a double', '0.1000000000000000055511151231257827'],
  ['double-quoted text', '"quoted"'],
  ['single-quoted text', "'single'"],
  ['JSON-looking text', '{"a": 1}'],
  ['a JSON array with padding', '  [1, 2]  '],
  ['true', 'true'],
  ['null', 'null'],
  ['unicode', 'unicode ✓ é 漢字 🙂'],
  ['empty', ''],
  ['only spaces', '   '],
  ['only whitespace with a newline', ' \t \n'],
  ['control characters', 'ctl \x01\x02\x7f \x1b[31mred\x1b[0m'],
  ['a backslash-n written out', 'back\\nslash'],
  ['a tab inside', 'tab\tinside'],
];

const TOOLS = {
  'tools/echo_yaml.yaml': "description: Prints the value.\ntags: [read]\nparameters:\n  value: { type: string, description: The value. }\nrun: [printf, '%s\\n', '{value}']\n",
  'tools/echo_script.py': '"""\nTool: echo_script\nDescription: Prints the value.\nTags: read\nInput:\n  value (str): The value.\n"""\nimport json, sys\nvalue = json.load(sys.stdin)["value"]\nsys.stdout.buffer.write((value + "\\n").encode("utf-8"))\n',
  'tools/echo_worker.py': '"""\nTool: echo_worker\nDescription: Returns the value.\nTags: read\nInput:\n  value (str): The value.\n"""\n\ndef execute(args):\n    return args["value"]\n',
  'tools/echo_ts.ts': "/**\n * Tool: echo_ts\n * Description: Prints the value.\n * Tags: read\n * Input:\n *   value (str): The value.\n */\nlet s = '';\nprocess.stdin.on('data', (c) => (s += c));\nprocess.stdin.on('end', () => process.stdout.write((JSON.parse(s) as { value: string }).value + '\\n'));\n",
};
const TOOL_NAMES = ['echo_yaml', 'echo_script', 'echo_worker', 'echo_ts'];

let project: string;
let agent: AgentProcess;

beforeAll(async () => {
  project = writeProject({ 'forge.yaml': minimalConfig(), ...TOOLS });
  agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth', '--host', '127.0.0.1'], { cwd: project });
}, 60_000);

afterAll(async () => {
  await agent?.stop();
});

/** The cases tried, for the closing note. */
export const roundTrips = { rest: 0, cli: 0 };

describe.each(TOOL_NAMES)('%s returns its output exactly', (tool) => {
  it.each(PROBES)('over REST: %s', async (_what, value) => {
    roundTrips.rest++;
    const response = await fetch(`${agent.url}/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ value }) });
    const body = (await response.json()) as { ok: boolean; value: unknown };
    expect(body.ok, JSON.stringify(body)).toBe(true);
    expect(body.value).toBe(value);
  });

  it('over the CLI (forge tool run --json), every probe', async () => {
    for (const [what, value] of PROBES) {
      roundTrips.cli++;
      const run = await forge(['tool', 'run', tool, '--json', '--param', `value=${value}`], project);
      expect(run.code, `${what}: ${run.stderr}`).toBe(0);
      expect((JSON.parse(run.stdout) as { value: unknown }).value, what).toBe(value);
    }
  }, 240_000);
});
