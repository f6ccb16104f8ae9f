/**
 * The exact-output corpus: values that trimming, decoding or number parsing
 * would change, and four kinds of tool that each print (or return) the value
 * — a YAML tool, a Python script tool, a Python execute() worker tool and a
 * TypeScript tool. exact-output-rest.test.ts sends them over REST,
 * exact-output-cli.test.ts through `forge tool run`: two files, so the two
 * front ends run side by side.
 */
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

export const TOOLS = {
  'tools/echo_yaml.yaml': "description: Prints the value.\ntags: [read]\nparameters:\n  value: { type: string, description: The value. }\nrun: [printf, '%s\\n', '{value}']\n",
  'tools/echo_script.py': '"""\nTool: echo_script\nDescription: Prints the value.\nTags: read\nInput:\n  value (str): The value.\n"""\nimport json, sys\nvalue = json.load(sys.stdin)["value"]\nsys.stdout.buffer.write((value + "\\n").encode("utf-8"))\n',
  'tools/echo_worker.py': '"""\nTool: echo_worker\nDescription: Returns the value.\nTags: read\nInput:\n  value (str): The value.\n"""\n\ndef execute(args):\n    return args["value"]\n',
  'tools/echo_ts.ts': "/**\n * Tool: echo_ts\n * Description: Prints the value.\n * Tags: read\n * Input:\n *   value (str): The value.\n */\nlet s = '';\nprocess.stdin.on('data', (c) => (s += c));\nprocess.stdin.on('end', () => process.stdout.write((JSON.parse(s) as { value: string }).value + '\\n'));\n",
};
export const TOOL_NAMES = ['echo_yaml', 'echo_script', 'echo_worker', 'echo_ts'];

/** A YAML tool's output that is a JSON object or array is its structured result (parsed exactly), as its steps' references read it. */
export const isJsonContainer = (value: string) => /^\s*[[{]/.test(value);
export const probesFor = (tool: string) => (tool === 'echo_yaml' ? PROBES.filter(([, value]) => !isJsonContainer(value)) : PROBES);

