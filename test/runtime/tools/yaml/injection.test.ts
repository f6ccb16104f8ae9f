/**
 * The injection corpus: hostile values placed in every context a
 * placeholder can stand in — shell words, '...', "...", $'...', here-documents,
 * Python literals and every kind of Python string, run: arguments, script:
 * files, the environment, tool-step arguments and output: — each printed back
 * by a real script as the hex of its bytes and compared byte for byte. Every
 * payload that would run a command creates a file named "pwned"; none may exist.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../helpers/project.ts';
import { yamlRegistry } from './helpers.ts';

const HOSTILE: string[] = [
  '$(touch pwned)',
  '`touch pwned`',
  '; touch pwned',
  '| touch pwned',
  '&& touch pwned',
  '|| touch pwned',
  '\ntouch pwned',
  '\r\ntouch pwned\r\n',
  "'; touch pwned; '",
  '"; touch pwned; "',
  '\\"; touch pwned; \\"',
  "\\'; touch pwned; \\'",
  "$'\\x27'; touch pwned",
  '${IFS}touch${IFS}pwned',
  '<(touch pwned)',
  '>pwned',
  "'+__import__('os').system('touch pwned')+'",
  '"+__import__("os").system("touch pwned")+"',
  '"""+__import__("os").system("touch pwned")+"""',
  "'''+__import__('os').system('touch pwned')+'''",
  '{__import__("os").system("touch pwned")}',
  '\\\n__import__("os").system("touch pwned")',
  "'",
  '"',
  "''",
  '""',
  '\'"\'"',
  '`',
  '\\',
  '\\\\',
  'ends with a backslash\\',
  '\\n',
  '\\x41\\u0041\\N{BULLET}',
  '$HOME',
  '${HOME}',
  '$((6*7))',
  '$0 $@ "$@" $# $?',
  '$IFS',
  '*',
  '?',
  '[a-z]*',
  '~',
  '~root',
  '/etc/*',
  '!!',
  '!$',
  '# not a comment',
  'a # b',
  '{V1}',
  '{RAW:V1}',
  '{{V1}}',
  '{input}',
  '{0}',
  '}{',
  '{',
  '}',
  '%s%n%x',
  '%(V1)s',
  '2>&1',
  '-rf',
  '--help',
  '-',
  'a b  c',
  '\t tab \t',
  '  leading and trailing  ',
  '',
  'é 中文 😀',
  '\u2028\u2029\u0085',
  '\x01\x02\x1b[31m\x7f',
  'line1\nline2\n',
  '\n',
  'EOF',
  ')',
  '(',
  '&',
  ';',
  '|',
  'x'.repeat(3000),
];

const N = HOSTILE.length;
const names = HOSTILE.map((_, i) => `V${i}`);
const parameters = Object.fromEntries(names.map((n) => [n, { type: 'string' }]));
const args = Object.fromEntries(names.map((n, i) => [n, HOSTILE[i]]));
const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');

/** Shell: hex of what printf prints, one line per value. */
const shHex = (expr: string) => `printf '%s' ${expr} | od -An -v -tx1 | tr -d ' \\n'; echo`;
const shellLines = (line: (name: string) => string) => names.map(line).join('\n') + '\n';
const pyHex = (expr: string) => `print((${expr}).encode('utf-8', 'surrogatepass').hex())`;
const pyLines = (line: (name: string) => string) => names.map(line).join('\n') + '\n';
const HEREDOC_END = 'FORGE_HEREDOC_END';

interface Context {
  tool: Record<string, unknown>;
  /** What the script prints for a value (before hex). */
  wrap?: (value: string) => string;
}

const CONTEXTS: Record<string, Context> = {
  'bash, bare': { tool: { bash: shellLines((n) => shHex(`{${n}}`)) } },
  "bash, in '...'": { tool: { bash: shellLines((n) => shHex(`'{${n}}'`)) } },
  'bash, in "..."': { tool: { bash: shellLines((n) => shHex(`"{${n}}"`)) } },
  'bash, inside "..." text': { tool: { bash: shellLines((n) => shHex(`"<<{${n}}>>"`)) }, wrap: (v) => `<<${v}>>` },
  "bash, in $'...'": { tool: { bash: shellLines((n) => shHex(`$'\\x3c{${n}}\\x3e'`)) }, wrap: (v) => `<${v}>` },
  'bash, in an assignment': { tool: { bash: shellLines((n) => `v={${n}}; ${shHex('"$v"')}`) } },
  'bash, in "$(...)"': { tool: { bash: shellLines((n) => `v="$(printf '%s' {${n}}; printf .)"; ${shHex('"${v%.}"')}`) } },
  'bash, in a here-document': {
    tool: { bash: shellLines((n) => `cat <<${HEREDOC_END} | od -An -v -tx1 | tr -d ' \\n'; echo\n{${n}}\n${HEREDOC_END}`) },
    wrap: (v) => `${v}\n`,
  },
  "bash, in a quoted here-document": {
    tool: { bash: shellLines((n) => `cat <<'${HEREDOC_END}' | od -An -v -tx1 | tr -d ' \\n'; echo\n[{${n}}]\n${HEREDOC_END}`) },
    wrap: (v) => `[${v}]\n`,
  },
  'bash, after a comment with the value': { tool: { bash: shellLines((n) => `# note: {${n}}\n${shHex(`{${n}}`)}`) } },
  'sh, bare': { tool: { sh: shellLines((n) => shHex(`{${n}}`)) } },
  "sh, in '...'": { tool: { sh: shellLines((n) => shHex(`'{${n}}'`)) } },
  'sh, in "..."': { tool: { sh: shellLines((n) => shHex(`"a{${n}}b"`)) }, wrap: (v) => `a${v}b` },
  'sh, in a here-document': {
    tool: { sh: shellLines((n) => `cat <<${HEREDOC_END} | od -An -v -tx1 | tr -d ' \\n'; echo\n{${n}}\n${HEREDOC_END}`) },
    wrap: (v) => `${v}\n`,
  },
  'python, bare': { tool: { python: pyLines((n) => pyHex(`{${n}}`)) } },
  "python, in '...'": { tool: { python: pyLines((n) => pyHex(`'{${n}}'`)) } },
  'python, in "..."': { tool: { python: pyLines((n) => pyHex(`"<{${n}}>"`)) }, wrap: (v) => `<${v}>` },
  "python, in '''...'''": { tool: { python: pyLines((n) => pyHex(`'''{${n}}'''`)) } },
  'python, in """..."""': { tool: { python: pyLines((n) => pyHex(`"""x{${n}}y"""`)) }, wrap: (v) => `x${v}y` },
  "python, in r'...'": { tool: { python: pyLines((n) => pyHex(`r'\\d{${n}}\\w'`)) }, wrap: (v) => `\\d${v}\\w` },
  'python, in r"""..."""': { tool: { python: pyLines((n) => pyHex(`r"""{${n}}"""`)) } },
  "python, in f'...'": { tool: { python: `k = 7\n` + pyLines((n) => pyHex(`f'{{k}}{${n}}{{k}}'`)) }, wrap: (v) => `7${v}7` },
  'python, in rf"..."': { tool: { python: pyLines((n) => pyHex(`rf"\\n={${n}}"`)) }, wrap: (v) => `\\n=${v}` },
  "python, in b'...'": { tool: { python: pyLines((n) => `print(b'{${n}}'.hex())`) } },
  "python, in rb'...'": { tool: { python: pyLines((n) => `print(rb'{${n}}'.hex())`) } },
  'python, after a comment with the value': { tool: { python: pyLines((n) => `# note: {${n}}\n${pyHex(`{${n}}`)}`) } },
  // After `--`: values starting with "-" (-rf, --help) are refused where a program would read them as options.
  'run:, a list of arguments': {
    tool: { run: ['python3', '-c', "import sys\nfor a in sys.argv[2:]: print(a.encode('utf-8', 'surrogateescape').hex())", '--', ...names.map((n) => `{${n}}`)] },
  },
  'run:, one string split into words': {
    tool: { run: `python3 -c "import sys\nfor a in sys.argv[1:]: print(a.encode('utf-8', 'surrogateescape').hex())" ${names.map((n) => `--v={${n}}`).join(' ')}` },
    wrap: (v) => `--v=${v}`,
  },
  'script: with shell: bash {0}': { tool: { script: shellLines((n) => shHex(`"{${n}}"`)), shell: 'bash {0}' } },
  'script: with shell: python3 -u {0}': { tool: { script: pyLines((n) => pyHex(`'{${n}}'`)), shell: 'python3 -u {0}' } },
  'environment:': {
    tool: {
      environment: Object.fromEntries(names.map((n) => [n, `{${n}}`])),
      python: `import os\n` + pyLines((n) => pyHex(`os.environ['${n}']`)),
    },
  },
};

function expectEchoed(stdout: unknown, wrap: (v: string) => string = (v) => v) {
  expect(typeof stdout).toBe('string');
  const lines = (stdout as string).split('\n');
  const mismatches = HOSTILE.map((value, i) => ({ value, expected: hex(wrap(value)), got: lines[i] })).filter((m) => m.expected !== m.got);
  expect(mismatches).toEqual([]);
}

describe(`the injection corpus (${N} hostile values)`, () => {
  it('has at least 50 values', () => {
    expect(N).toBeGreaterThanOrEqual(50);
  });

  it.each(Object.entries(CONTEXTS))('arrives byte for byte: %s', async (_name, context) => {
    const workDir = tempDir('forge-inject-');
    const registry = yamlRegistry(workDir, { echo: { description: 'Echoes.', parameters, ...context.tool, output: '{main.stdout}' } });
    const result = await registry.execute('echo', args);
    expect(result.ok, JSON.stringify(result)).toBe(true);
    if (result.ok) expectEchoed(result.value, context.wrap);
    expect(existsSync(join(workDir, 'pwned'))).toBe(false);
  });

  it('arrives byte for byte in a called tool\'s arguments, all at once and one by one', async () => {
    const workDir = tempDir('forge-inject-');
    const registry = yamlRegistry(workDir, {
      echo: { description: 'Echoes.', parameters, python: pyLines((n) => pyHex(`{${n}}`)), output: '{main.stdout}' },
      whole: { description: 'Passes its input on.', parameters, steps: [{ name: 'call', tool: 'echo' }] },
      each: { description: 'Passes each argument on.', parameters, steps: [{ name: 'call', tool: 'echo', args: Object.fromEntries(names.map((n) => [n, `{${n}}`])) }] },
    });
    for (const meta of ['whole', 'each']) {
      const result = await registry.execute(meta, args);
      expect(result.ok, JSON.stringify(result)).toBe(true);
      if (result.ok) expectEchoed(result.value);
    }
    expect(existsSync(join(workDir, 'pwned'))).toBe(false);
  });

  it('arrives as itself in output:, in plain text and inside a JSON string', async () => {
    const workDir = tempDir('forge-inject-');
    const registry = yamlRegistry(workDir, {
      echo: { description: 'Echoes.', parameters: { V: { type: 'string' } }, sh: 'true', output: '{V}' },
      framed: { description: 'Frames.', parameters: { V: { type: 'string' } }, sh: 'true', output: '<{V}>' },
      json: { description: 'Frames.', parameters: { V: { type: 'string' } }, sh: 'true', output: '["{V}", "{V}"]' },
    });
    for (const value of HOSTILE) {
      expect(await registry.execute('echo', { V: value })).toMatchObject({ ok: true, value });
      expect(await registry.execute('framed', { V: value })).toMatchObject({ ok: true, value: `<${value}>` });
      const json = await registry.execute('json', { V: value });
      expect(json.ok, JSON.stringify(json)).toBe(true);
      expect(JSON.parse((json as { value: string }).value)).toEqual([value, value]);
    }
  });

  it('passes numbers, booleans, lists and objects as what they are', async () => {
    const workDir = tempDir('forge-inject-');
    const typed = { n: { type: 'number' }, b: { type: 'boolean' }, list: { type: 'array' }, obj: { type: 'object' } };
    const registry = yamlRegistry(workDir, {
      py: { description: 'Types.', parameters: typed, python: 'import json\nprint(json.dumps([{n}, {b}, {list}, {obj}, type({n}).__name__]))' },
      sh: { description: 'Words.', parameters: typed, bash: 'for w in {list}; do printf "[%s]" "$w"; done; echo " {n} {b}"' },
    });
    const values = { n: -2.5, b: true, list: ['a b', "it's", '$(touch pwned)'], obj: { k: ['v', 1, null, false] } };
    expect(await registry.execute('py', values)).toMatchObject({ ok: true, value: [-2.5, true, values.list, values.obj, 'float'] });
    expect(await registry.execute('sh', values)).toMatchObject({ ok: true, value: "[a b][it's][$(touch pwned)] -2.5 true" });
    expect(existsSync(join(workDir, 'pwned'))).toBe(false);
  });
});

describe('values a context cannot hold are refused, not mangled', () => {
  it.each([
    ['bash', { bash: 'printf %s {V}' }],
    ['sh', { sh: "printf %s '{V}'" }],
    ['run:', { run: ['printf', '%s', '{V}'] }],
    ['environment:', { environment: { V: '{V}' }, sh: 'printf %s "$V"' }],
    ['working-directory:', { 'working-directory': '{V}', sh: 'pwd' }],
  ])('a NUL character, or half of a surrogate pair (which Node would pass as U+FFFD), in %s', async (_name, tool) => {
    const workDir = tempDir('forge-inject-');
    mkdirSync(join(workDir, 'x😀')); // for working-directory
    const registry = yamlRegistry(workDir, { t: { description: 'NUL.', parameters: { V: { type: 'string' } }, ...tool } });
    expect(await registry.execute('t', { V: 'a\0b' })).toMatchObject({ ok: false, error: { code: 'FORGE_YAML_VALUE', message: expect.stringContaining('contains a NUL character') } });
    for (const V of ['a\ud800b', 'a\udfff', '\udbff']) {
      expect(await registry.execute('t', { V })).toMatchObject({ ok: false, error: { code: 'FORGE_YAML_VALUE', message: expect.stringContaining('contains half of a surrogate pair') } });
    }
    // A whole pair is a character like any other.
    expect(await registry.execute('t', { V: 'x😀' })).toMatchObject({ ok: true });
  });

  it('keeps a NUL character in a Python string', async () => {
    const registry = yamlRegistry(tempDir('forge-inject-'), { t: { description: 'NUL.', parameters: { V: { type: 'string' } }, python: "print({V}.encode().hex(), '{V}' == {V})" } });
    expect(await registry.execute('t', { V: 'a\0b' })).toMatchObject({ ok: true, value: '610062 True' });
  });

  it.each([
    ['unquoted', `cat <<END\n{V}\nEND`],
    ['quoted', `cat <<'END'\n{V}\nEND`],
    ['tab-stripped', `cat <<-END\n\t{V}\n\tEND`],
  ])('a value that would end a %s here-document early', async (_name, bash) => {
    const workDir = tempDir('forge-inject-');
    const registry = yamlRegistry(workDir, { t: { description: 'Heredoc.', parameters: { V: { type: 'string' } }, bash } });
    const result = await registry.execute('t', { V: 'x\nEND\ntouch pwned' });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_YAML_VALUE', message: expect.stringContaining('"END"') } });
    expect(existsSync(join(workDir, 'pwned'))).toBe(false);
    expect(await registry.execute('t', { V: 'ENDING' })).toMatchObject({ ok: true, value: 'ENDING' });
  });
});

describe('bash arithmetic, which runs the commands of array subscripts even in quoted text', () => {
  const PAYLOAD = 'a[$(touch pwned)]';
  it.each([
    ['$((...))', 'echo $(( {V} + 1 ))'],
    ['$((...)), quoted', 'echo $(( "{V}" + 1 ))'],
    ['((...))', '(( {V} >= 1 )) && echo big'],
    ['for ((...))', 'for ((i={V}; i < 2; i++)); do echo $i; done'],
    ['let', 'let "n = {V} + 1"; echo $n'],
    ['[[ -eq ]]', "[[ 1 -eq '{V}' ]] && echo same"],
    ['[[ -le ]] on a command substitution', '[[ 1 -le $(printf %s {V}) ]] && echo less'],
    ['an array subscript', 'a=(); a[{V}]=1; echo ${#a[@]}'],
    ['an assignment to an integer variable', 'declare -i n; n={V}; echo $n'],
  ])('takes numbers only in %s', async (_where, bash) => {
    const workDir = tempDir('forge-inject-');
    const registry = yamlRegistry(workDir, { t: { description: 'Arithmetic.', parameters: { V: { type: 'string' } }, bash } });
    const refused = await registry.execute('t', { V: PAYLOAD });
    expect(refused).toMatchObject({ ok: false, error: { code: 'FORGE_YAML_VALUE', message: expect.stringContaining('must be a whole number') } });
    expect(existsSync(join(workDir, 'pwned'))).toBe(false);
    expect(await registry.execute('t', { V: '1' })).toMatchObject({ ok: true });
  });

  it('refuses subscript-shaped values anywhere in a script that evaluates variables as arithmetic', async () => {
    const workDir = tempDir('forge-inject-');
    const registry = yamlRegistry(workDir, {
      flows: { description: 'Data flow.', parameters: { V: { type: 'string' } }, bash: 'v={V}; (( v > 1 )) && echo big || echo small' },
      plain: { description: 'No arithmetic.', parameters: { V: { type: 'string' } }, bash: 'printf %s {V}' },
    });
    expect(await registry.execute('flows', { V: PAYLOAD })).toMatchObject({ ok: false, error: { code: 'FORGE_YAML_VALUE' } });
    expect(existsSync(join(workDir, 'pwned'))).toBe(false);
    expect(await registry.execute('flows', { V: '5' })).toMatchObject({ ok: true, value: 'big' });
    // Where nothing is evaluated as arithmetic, such a value is just text.
    expect(await registry.execute('plain', { V: '^[a-z]+$ and a[$(x)]' })).toMatchObject({ ok: true, value: '^[a-z]+$ and a[$(x)]' });
  });
});
