/** The forge tool commands for YAML tools, scopes and approvals, run as the real CLI. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { currentPlatform } from '../../runtime/tools/yaml/definition.ts';
import { forge, forgeBin, minimalConfig, tempDir, writeProject } from '../helpers/project.ts';
import { runOnTerminal } from '../helpers/terminal.ts';

/** Fresh, empty user and global scopes. */
function scopes() {
  const home = tempDir('forge-home-');
  const global = tempDir('forge-global-');
  return { home, global, env: { FORGE_HOME: home, FORGE_GLOBAL_TOOLS: global } };
}

const GREET = 'description: Greets someone.\ntags: [read]\nparameters:\n  name: { type: string, description: Who to greet. }\nbash: echo "Hello, {name}!"\n';

describe('forge help for tools', () => {
  it('explains YAML tools and every subcommand, with examples', async () => {
    const { code, stdout } = await forge(['help', 'tool'], tempDir());
    expect(code).toBe(0);
    for (const text of ['add ', 'get ', 'remove ', 'check ', '{PARAM} inserts a parameter', 'forge tool add greet', 'user scope (~/.forge/tools']) expect(stdout).toContain(text);
  });

  it.each([[['tool', 'add', '--help']], [['help', 'tool', 'add']]])('prints forge tool add\'s own usage for %j', async (args) => {
    const { code, stdout } = await forge(args, tempDir());
    expect(code).toBe(0);
    expect(stdout).toContain('usage: forge tool add NAME --description D');
    expect(stdout).toContain('examples:');
    expect(stdout).toContain('--parameter NAME DESC');
  });
});

describe('forge tool add / get / list / remove', () => {
  it('tells a mapping written where a string goes (an unquoted {...} output:) to quote the whole value', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/t.yaml': 'description: T.\nsteps:\n  - { name: quote, bash: echo 1 }\noutput: {"quote": {quote.output}}\n' });
    const { code, stdout, stderr } = await forge(['validate'], dir);
    expect(code).toBe(1);
    expect(stdout + stderr).toContain('FORGE_YAML_TYPE "output" must be a string');
    expect(stdout + stderr).toContain('YAML reads an unquoted {...}');
    expect(stdout + stderr).not.toContain('if YAML reads it as a number');
  });

  it('says a default that does not fit its type with the article the type takes ("an integer", "an array", "a string")', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/t.yaml': 'description: T.\ntags: [read]\nparameters:\n  n: { type: integer, default: one }\n  xs: { type: array, default: one }\n  s: { type: string, default: 1 }\nbash: echo {n}\n',
    });
    const { code, stderr } = await forge(['validate'], dir);
    expect(code).toBe(1);
    expect(stderr).toContain('FORGE_YAML_PARAMETER the default of parameter "n" is not an integer');
    expect(stderr).toContain('FORGE_YAML_PARAMETER the default of parameter "xs" is not an array');
    expect(stderr).toContain('FORGE_YAML_PARAMETER the default of parameter "s" is not a string');
  });

  it('refuses a command naming a parameter it does not declare, saying the places are in a file it did not write, and how to declare it', async () => {
    const { env } = scopes();
    const dir = writeProject({ 'forge.yaml': minimalConfig() });
    const added = await forge(['tool', 'add', 't6', '--description', 'x', '--bash', 'echo {missing}', '--tag', 'read'], dir, env);
    expect(added.code).toBe(1);
    expect(added.stderr).toContain('FORGE_YAML_REFERENCE {missing} names no parameter');
    expect(added.stderr).toContain('hint: declare it under parameters: (forge tool add: --parameter missing "…"), or write {{ and }} for literal braces');
    expect(added.stderr).toContain('t6 was not added: the tool has errors (placed above in tools/t6.yaml as it would be; nothing was written)');
    expect(existsSync(join(dir, 'tools', 't6.yaml'))).toBe(false);
  });

  it("refuses a python: step that does not compile, at its YAML file:line:col, in tool add and forge validate; a placeholder in it is read as a name", async () => {
    const { env } = scopes();
    const dir = writeProject({ 'forge.yaml': minimalConfig() });
    const added = await forge(['tool', 'add', 'report', '--description', 'A report.', '--parameter', 'sym', 'Symbol', '--tag', 'read', '--step', 'quote', 'python: print({sym})', '--step', 'format', "python: x = {sym}\nprint(f'{x')\n"], dir, env);
    expect(added.code).toBe(1);
    expect(added.stdout + added.stderr).toMatch(/tools\/report\.yaml:\d+:\d+ FORGE_PY_SYNTAX f-string/);
    expect(existsSync(join(dir, 'tools', 'report.yaml'))).toBe(false);

    // Written by hand: forge validate reports it where it is in the file.
    mkdirSync(join(dir, 'tools'), { recursive: true });
    writeFileSync(join(dir, 'tools', 'report.yaml'), 'description: A report.\ntags: [read]\nparameters:\n  sym: { type: string }\nsteps:\n  - name: format\n    python: |\n      x = {sym}\n      def f(v)\n          return v\n');
    const validated = await forge(['validate'], dir, env);
    expect(validated.code).toBe(1);
    expect(validated.stdout + validated.stderr).toContain('tools/report.yaml:9:15 FORGE_PY_SYNTAX');

    // Placeholders in code, in strings and in an f-string's text compile as what they stand for.
    writeFileSync(join(dir, 'tools', 'report.yaml'), "description: A report.\ntags: [read]\nparameters:\n  sym: { type: string }\npython: |\n  x = {sym}\n  print(f'{sym}: {{x}}', '''{sym}''', x)\n");
    const valid = await forge(['validate'], dir, env);
    expect(valid.stdout + valid.stderr).not.toContain('FORGE_PY_SYNTAX');
    expect(valid.code).toBe(0);
  });

  it('adds a tool to the project, checked as the build checks it, that runs straight away', async () => {
    const { env } = scopes();
    const dir = writeProject({ 'forge.yaml': minimalConfig() });
    const added = await forge(
      ['tool', 'add', 'greet', '--description', 'Greets.', '--bash', 'echo "Hello, {name}! x{times}"', '--parameter', 'name', 'Who', '--parameter', 'times', 'How often', 'type=integer', 'default=2', '--tag', 'read', '--timeout', '5s', '--version', '1.2.0'],
      dir,
      env,
    );
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain('added greet to tools/greet.yaml');
    const text = readFileSync(join(dir, 'tools/greet.yaml'), 'utf8');
    expect(text).toContain('version: 1.2.0');
    expect(text).toContain('default: 2');
    expect(text).toContain('timeout: 5000');
    const run = await forge(['tool', 'run', 'greet', '--param', "name=O'Brien"], dir, env);
    expect(run.stdout).toBe("Hello, O'Brien! x2\n");
  });

  it("refuses a value the help's own du example would read as an option, with what to write instead", async () => {
    const { env } = scopes();
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'secret.txt': 'tools/\0' });
    const added = await forge(['tool', 'add', 'disk_usage', '--description', 'Size of a folder.', '--run', 'du -sh {path}', '--parameter', 'path', 'The folder', 'default=.', '--tag', 'read'], dir, env);
    expect(added.code, added.stderr).toBe(0);
    const attack = await forge(['tool', 'run', 'disk_usage', '--param', 'path=--files0-from=secret.txt'], dir, env);
    expect(attack.code).toBe(1);
    expect(attack.stderr).toContain('FORGE_YAML_VALUE');
    expect(attack.stderr).toContain('so "du" would read it as an option');
    expect(attack.stdout).not.toContain('tools');
    const plain = await forge(['tool', 'run', 'disk_usage', '--param', 'path=.'], dir, env);
    expect(plain.code, plain.stderr).toBe(0);
  });

  it("writes a parameter's pattern, minimum and maximum (the help's make example), checked at the call and, when unsafe, at the add", async () => {
    const { env } = scopes();
    const dir = writeProject({ 'forge.yaml': minimalConfig() });
    const added = await forge(['tool', 'add', 'build', '--description', 'Builds one target.', '--run', 'echo make {target} {jobs}', '--parameter', 'target', 'The target', 'pattern=^[a-z][a-z0-9_-]*$', '--parameter', 'jobs', 'Parallel jobs', 'type=integer', 'minimum=1', 'maximum=16', 'default=2', '--tag', 'run'], dir, env);
    expect(added.code, added.stderr).toBe(0);
    const text = readFileSync(join(dir, 'tools', 'build.yaml'), 'utf8');
    expect(text).toContain("pattern: ^[a-z][a-z0-9_-]*$");
    expect(text).toContain('minimum: 1');
    expect(text).toContain('maximum: 16');
    const described = await forge(['tool', 'describe', 'build'], dir, env);
    expect(described.stdout).toMatch(/target +str +required +matches \^\[a-z\]\[a-z0-9_-\]\*\$\n/);
    expect(described.stdout).toMatch(/jobs +int +optional default 2 +1 to 16\n/);
    for (const param of ['target=CC=evil', 'target=-j']) {
      const refused = await forge(['tool', 'run', 'build', '--yes', '--param', param], dir, env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('FORGE_TOOL_ARGS');
      expect(refused.stderr).toContain('argument "target" must match pattern "^[a-z][a-z0-9_-]*$"');
    }
    const tooMany = await forge(['tool', 'run', 'build', '--yes', '--param', 'target=all', '--param', 'jobs=64'], dir, env);
    expect(tooMany.stderr).toContain('argument "jobs" must be <= 16');
    const ran = await forge(['tool', 'run', 'build', '--yes', '--param', 'target=all'], dir, env);
    expect(ran.stdout).toBe('make all 2\n');
    const unsafe = await forge(['tool', 'add', 'look', '--description', 'Looks.', '--run', 'echo {w}', '--parameter', 'w', 'A word', 'pattern=^(?=a)a+$'], dir, env);
    expect(unsafe.code).not.toBe(0);
    expect(unsafe.stderr).toContain('uses a lookaround, which only the backtracking regexp engine runs');
    const notANumber = await forge(['tool', 'add', 'look', '--description', 'Looks.', '--run', 'echo {n}', '--parameter', 'n', 'A count', 'type=integer', 'maximum=ten'], dir, env);
    expect(notANumber.stderr).toContain('--parameter n: maximum=ten is not a number');
  });

  it('describes a user-scope tool by name and as user/NAME, inside a project and outside one, as tool run finds it', async () => {
    const { env } = scopes();
    const outside = tempDir('forge-cwd-');
    const added = await forge(['tool', 'add', 'shout', '--description', 'Upper-cases text.', '--bash', 'echo {text} | tr a-z A-Z', '--parameter', 'text', 'Text', '--tag', 'read', '--scope', 'user'], outside, env);
    expect(added.code, added.stderr).toBe(0);
    const project = writeProject({ 'forge.yaml': minimalConfig() });
    for (const [cwd, reference] of [[outside, 'shout'], [outside, 'user/shout'], [project, 'shout'], [project, 'user/shout']]) {
      const { code, stdout, stderr } = await forge(['tool', 'describe', reference, '--json'], cwd, env);
      expect(code, `${reference} in ${cwd}: ${stderr}${stdout}`).toBe(0);
      expect(JSON.parse(stdout).tool).toMatchObject({ name: 'shout', description: 'Upper-cases text.' });
    }
    const wrongScope = await forge(['tool', 'describe', 'global/shout'], project, env);
    expect(wrongScope.code).toBe(1);
  });

  it('says why it will not remove, get or add a tool with a code and a hint, in text and --json', async () => {
    const { env } = scopes();
    const shop = { openapi: '3.0.3', info: { title: 'Shop', version: '1' }, paths: { '/items': { get: { operationId: 'listItems', responses: { '200': { description: 'the items' } } } } } };
    const dir = writeProject({
      'forge.yaml': minimalConfig('tools:\n  - uuid_generate\napis:\n  - name: shop\n    spec: specs/shop.json\n    base_url: http://127.0.0.1:9\n'),
      'specs/shop.json': JSON.stringify(shop),
      'tools/greet.py': '"""\nTool: greet\nDescription: Greets.\n"""\n\ndef execute(args):\n    return "hi"\n',
      'tools/yml_tool.yml': 'description: d\nbash: echo hi\n',
    });
    const cases: [string[], string, RegExp][] = [
      [['tool', 'remove', 'greet'], 'FORGE_TOOL_NOT_YAML', /tools\/greet\.py is a python tool; Forge only removes the YAML tools it can write/],
      [['tool', 'remove', 'uuid_generate'], 'FORGE_TOOL_BUILTIN', /"uuid_generate" ships with Forge/],
      [['tool', 'get', 'uuid_generate'], 'FORGE_TOOL_BUILTIN', /"uuid_generate" ships with Forge and has no file of its own/],
      // An API's operation is no builtin, and forge.yaml's tools: does not list it: where it comes from, and how to leave it out.
      [['tool', 'get', 'shop__listItems'], 'FORGE_TOOL_ADAPTER', /"shop__listItems" is an adapter tool from forge\.yaml:\d+:\d+ \(API "shop"\), with no file of its own/],
      [['tool', 'remove', 'shop__listItems'], 'FORGE_TOOL_ADAPTER', /"shop__listItems" is an adapter tool from forge\.yaml:\d+:\d+ \(API "shop"\)/],
      [['tool', 'remove', 'nothing_here'], 'FORGE_TOOL_UNKNOWN', /no tool named "nothing_here"/],
      [['tool', 'add', 'yml_tool', '--description', 'D.', '--bash', 'echo x'], 'FORGE_FILE_EXISTS', /tools\/yml_tool\.yml already exists/],
    ];
    for (const [args, code, message] of cases) {
      const text = await forge(args, dir, env);
      expect(text.code, args.join(' ')).toBe(1);
      expect(text.stderr).toMatch(new RegExp(`✘ ${code} ${message.source}`));
      const json = await forge([...args, '--json'], dir, env);
      expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code, message: expect.stringMatching(message) } });
    }
    expect(existsSync(join(dir, 'tools/greet.py'))).toBe(true);
  });

  it('says that a tool added without a security tag counts as run, and says nothing when it has one', async () => {
    const { env } = scopes();
    const dir = writeProject({ 'forge.yaml': minimalConfig() });
    const untagged = await forge(['tool', 'add', 'hi', '--description', 'Says hi.', '--bash', 'echo hi'], dir, env);
    expect(untagged.code, untagged.stderr).toBe(0);
    expect(untagged.stdout).toContain("note: no --tag read, write or run: it counts as a run tool, which the agent asks a person to confirm unless forge.yaml's approval: says otherwise\n");
    const tagged = await forge(['tool', 'add', 'ho', '--description', 'Says ho.', '--bash', 'echo ho', '--tag', 'read'], dir, env);
    expect(tagged.stdout).not.toContain('note:');
  });

  it('writes steps, environment and platforms', async () => {
    const { env } = scopes();
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/shout.yaml': 'description: Shouts.\ntags: [read]\nparameters:\n  text: { type: string }\nbash: printf %s {text} | tr a-z A-Z\n' });
    const added = await forge(
      ['tool', 'add', 'pipeline', '--description', 'Two steps.', '--step', 'first', 'python:print({text}[::-1])', '--step', 'loud', 'tool:shout', '--parameter', 'text', 'Text', '--env', 'MODE=fast', '--platform', currentPlatform()],
      dir,
      env,
    );
    expect(added.code, added.stderr).toBe(0);
    const run = await forge(['tool', 'run', 'pipeline', '--param', 'text=abc'], dir, env);
    expect(run.stdout).toBe('ABC\n');
  });

  it('refuses a tool with errors and writes nothing', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig() });
    const { code, stderr } = await forge(['tool', 'add', 'bad', '--description', 'Bad.', '--bash', 'echo `{name}`', '--parameter', 'name', 'Who'], dir, scopes().env);
    expect(code).toBe(1);
    expect(stderr).toContain('tools/bad.yaml:');
    expect(stderr).toContain('placeholder {name} stands inside backticks');
    expect(existsSync(join(dir, 'tools/bad.yaml'))).toBe(false);
  });

  it('refuses a name no tool may have as a usage error, before any file is named after it', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig() });
    const { code, stderr } = await forge(['tool', 'add', 'foo bar', '--description', 'Greets.', '--bash', 'echo hi'], dir, scopes().env);
    expect(code).toBe(2);
    expect(stderr).toContain('error: tool name "foo bar" may only contain letters, digits, "_" and "-" (e.g. foo_bar)');
    expect(stderr).not.toContain('.yaml');
    expect(existsSync(join(dir, 'tools', 'foo bar.yaml'))).toBe(false);
  });

  it('does not replace a tool without --force', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.yaml': GREET });
    const args = ['tool', 'add', 'greet', '--description', 'New.', '--bash', 'echo new'];
    const refused = await forge(args, dir, scopes().env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('already exists');
    expect(readFileSync(join(dir, 'tools/greet.yaml'), 'utf8')).toBe(GREET);
    expect((await forge([...args, '--force'], dir, scopes().env)).code).toBe(0);
    expect(readFileSync(join(dir, 'tools/greet.yaml'), 'utf8')).toContain('echo new');
  });

  it.each([
    [['tool', 'add', 'x', '--bash', 'echo'], 'missing --description'],
    [['tool', 'add', 'x', '--description', 'd'], 'the tool needs something to run'],
    [['tool', 'add', 'x', '--description', 'd', '--bash', 'a', '--run', 'b'], 'give one of --bash'],
    [['tool', 'add', 'x', '--description', 'd', '--bash', 'a', '--parameter', 'n', 'N', 'type=strng'], 'unknown type "strng" (did you mean "string"? types: string, number'],
    [['tool', 'add', 'x', '--description', 'd', '--bash', 'a', '--scope', 'team'], 'unknown scope "team"'],
    [['tool', 'add', 'x', '--description', 'd', '--bash', 'a', '--paramter', 'n', 'N'], 'unknown option --paramter (did you mean "--parameter"?)'],
  ])('exits 2 for %j', async (args, message) => {
    const { code, stderr } = await forge(args, writeProject({ 'forge.yaml': minimalConfig() }), scopes().env);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });

  it('adds, lists, gets, runs and removes a tool in the user scope, with or without a project', async () => {
    const { home, env } = scopes();
    const nowhere = tempDir();
    const added = await forge(['tool', 'add', 'stamp', '--description', 'Stamps text.', '--run', 'printf [%s] {text}', '--parameter', 'text', 'Text', '--tag', 'read', '--scope', 'user'], nowhere, env);
    expect(added.code, added.stderr).toBe(0);
    expect(existsSync(join(home, 'tools/stamp.yaml'))).toBe(true);

    const list = await forge(['tool', 'list', '--scope', 'user'], nowhere, env);
    expect(list.stdout).toMatch(/^stamp\s+custom\s+read\s+Stamps text\./m);
    const got = await forge(['tool', 'get', 'stamp', '--scope', 'user', '--json'], nowhere, env);
    expect(JSON.parse(got.stdout)).toMatchObject({ ok: true, scope: 'user', content: expect.stringContaining('run: printf [%s] {text}') });

    const project = writeProject({ 'forge.yaml': minimalConfig() });
    const run = await forge(['tool', 'run', 'user/stamp', '--param', 'text=a b'], project, env);
    expect(run.stdout).toBe('[a b]\n');
    const anywhere = await forge(['tool', 'run', 'stamp', '--param', 'text=c'], nowhere, env);
    expect(anywhere.stdout).toBe('[c]\n');

    expect((await forge(['tool', 'remove', 'user/stamp'], nowhere, env)).code).toBe(0);
    expect(existsSync(join(home, 'tools/stamp.yaml'))).toBe(false);
    const gone = await forge(['tool', 'get', 'stamp'], nowhere, env);
    expect(gone.code).toBe(1);
  });

  it('finds a tool for get in resolution order, and suggests a near name', async () => {
    const { env, global } = scopes();
    writeFileSync(join(global, 'greet.yaml'), GREET.replace('Greets someone.', 'The global greeter.'));
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.yaml': GREET });
    expect((await forge(['tool', 'get', 'greet'], dir, env)).stdout).toContain('Greets someone.');
    expect((await forge(['tool', 'get', 'global/greet'], dir, env)).stdout).toContain('The global greeter.');
    const typo = await forge(['tool', 'get', 'greeet'], dir, env);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('did you mean "greet"?');
  });

  it('removes only YAML tools, and keeps one other tools call unless --force, naming them', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/greet.yaml': GREET,
      'tools/twice.yaml': 'description: Greets twice.\nsteps:\n  - tool: greet\n  - tool: greet\n',
      'tools/mine.py': '"""\nTool: mine\nDescription: d\n"""\nprint(1)\n',
    });
    const py = await forge(['tool', 'remove', 'mine'], dir, scopes().env);
    expect(py.code).toBe(1);
    expect(py.stderr).toContain('delete tools/mine.py yourself');
    const kept = await forge(['tool', 'remove', 'greet'], dir, scopes().env);
    expect(kept.code).toBe(1);
    expect(kept.stderr).toContain('FORGE_TOOL_IN_USE twice calls greet; removing it would make it fail');
    expect(kept.stderr).toContain('hint: change that tool first, or pass --force to remove greet anyway');
    expect(existsSync(join(dir, 'tools', 'greet.yaml'))).toBe(true);
    const removed = await forge(['tool', 'remove', 'greet', '--force'], dir, scopes().env);
    expect(removed.code).toBe(0);
    expect(removed.stderr).toContain('these tools call greet and will fail until it is back: twice');
    expect(existsSync(join(dir, 'tools', 'greet.yaml'))).toBe(false);
  });

  it('notes tools made for other platforms in list --all, and will not run them', async () => {
    const other = currentPlatform() === 'windows' ? 'linux' : 'windows';
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/elsewhere.yaml': `description: Elsewhere.\nplatforms: [${other}]\nbash: echo\n`, 'tools/greet.yaml': GREET });
    const list = await forge(['tool', 'list'], dir, scopes().env);
    expect(list.stdout).not.toContain('elsewhere');
    const all = await forge(['tool', 'list', '--all'], dir, scopes().env);
    expect(all.stdout).toMatch(new RegExp(`^elsewhere .*not for this platform: runs on ${other}, not on ${currentPlatform()}`, 'm'));
    const run = await forge(['tool', 'run', 'elsewhere'], dir, scopes().env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('FORGE_TOOL_PLATFORM');
    // With --json, the refusal is the document, and stderr holds no text line beside it.
    const json = await forge(['tool', 'run', 'elsewhere', '--json'], dir, scopes().env);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_PLATFORM', message: `tool "elsewhere" runs on ${other}, not on ${currentPlatform()}` } });
    expect(json.stderr).toBe('');
  });
});

describe('forge tool run: an output: written as JSON', () => {
  it('escapes a step\'s output and a parameter inside JSON strings, keeps a number a number, and fails on text standing as a value', async () => {
    // Quotes, a backslash, a newline, a tab, a control character, non-ASCII and an attempt to add a key.
    const text = 'say "hi" \\ C:\\new\nline 2\tcol\u0001 é 中 😀 end", "admin": true, "x": "';
    const dir = writeProject({
      'forge.yaml': minimalConfig(),
      'notes.txt': text,
      'tools/digest.yaml':
        'description: Digests notes.\ntags: [read]\nparameters:\n  title: { type: string }\nsteps:\n  - { name: show, bash: cat notes.txt }\n  - { name: count, bash: "wc -c < notes.txt | tr -d \' \'" }\n' +
        'output: \'{"title": "{title}", "summary": "{show.output}", "bytes": {count.output}}\'\n',
      'tools/bare.yaml': 'description: Puts text where a value goes.\ntags: [read]\nsteps:\n  - { name: show, bash: cat notes.txt }\noutput: \'{"summary": {show.output}}\'\n',
    });
    const title = 'a "quoted", \\ title';
    const run = await forge(['tool', 'run', 'digest', '--param', `title=${title}`], dir, scopes().env);
    expect(run.code, run.stderr).toBe(0);
    const value = JSON.parse(run.stdout);
    expect(value).toEqual({ title, summary: text, bytes: Buffer.byteLength(text) });
    expect(Object.keys(value)).not.toContain('admin');

    const bare = await forge(['tool', 'run', 'bare'], dir, scopes().env);
    expect(bare.code).toBe(1);
    expect(bare.stderr).toContain('FORGE_YAML_VALUE');
    expect(bare.stderr).toContain('output: {show.output} stands as a JSON value');
    expect(bare.stdout).not.toContain('admin');
  });
});

describe('forge tool run --show-command / --dry-run', () => {
  const project = () =>
    writeProject({
      'forge.yaml': minimalConfig(),
      'tools/report.yaml':
        'description: Reports.\ntags: [read]\nparameters:\n  name: { type: string }\n  n: { type: integer, default: 2 }\nenvironment:\n  WHO: "{name}"\nsteps:\n  - name: list\n    run: printf "%s|" {name} {n}\n  - name: say\n    bash: |\n      echo "got: {list.output}" > said.txt\n      cat said.txt\n',
    });

  it('prints each command exactly as it runs, on stderr', async () => {
    const dir = project();
    const { code, stdout, stderr } = await forge(['tool', 'run', 'report', '--param', "name=it's", '--show-command'], dir, scopes().env);
    expect(code).toBe(0);
    expect(stdout).toBe("got: it's|2|\n");
    expect(stderr).toContain(`▸ report › list: printf '%s|' 'it'\\''s' 2`);
    expect(stderr).toContain('    env: WHO=\'it\'\\\'\'s\'');
    expect(stderr).toContain(`    │ echo "got: "'it'\\''s|2|'"" > said.txt`);
  });

  it('checks the arguments and runs nothing with --dry-run', async () => {
    const dir = project();
    const bad = await forge(['tool', 'run', 'report', '--dry-run', '--param', 'n=3'], dir, scopes().env);
    expect(bad.code).toBe(1);
    // As the call itself would answer: the code, and what the tool takes.
    expect(bad.stderr).toBe('✘ FORGE_TOOL_ARGS invalid arguments for "report": missing required argument "name"\n  hint: its arguments: name (string, required), n (integer)\n');
    const typo = await forge(['tool', 'run', 'reprot', '--dry-run'], dir, scopes().env);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('✘ FORGE_TOOL_UNKNOWN no tool named "reprot"\n  hint: did you mean "report"?\n');
    const good = await forge(['tool', 'run', 'report', '--dry-run', '--show-command', '--param', 'name=x'], dir, scopes().env);
    expect(good.code).toBe(0);
    expect(good.stdout).toContain('the arguments are valid for report; nothing was run');
    expect(good.stderr).toContain("▸ report › list: printf '%s|' x 2");
    expect(good.stderr).toContain(`echo "got: "'<list.output>'"" > said.txt`);
    expect(existsSync(join(dir, 'said.txt'))).toBe(false);
  });

  it('masks a passed-through token in the commands it shows, in text and --json', async () => {
    const token = 'api-tok-7c6b5a4f3e2d1c0b';
    const dir = writeProject({
      'forge.yaml': minimalConfig('env_passthrough: [API_TOKEN]\n'),
      'tools/call-api.yaml': 'description: Calls the API.\ntags: [read]\nenvironment:\n  AUTH: "Bearer ${API_TOKEN}"\nrun: printf "%s" ok\n',
    });
    const env = { ...scopes().env, API_TOKEN: token };
    const text = await forge(['tool', 'run', 'call-api', '--show-command'], dir, env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toContain("env: AUTH='Bearer [REDACTED]'");
    const json = await forge(['tool', 'run', 'call-api', '--show-command', '--json', '--dry-run'], dir, env);
    expect(json.code, json.stderr).toBe(0);
    for (const out of [text.stdout + text.stderr, json.stdout + json.stderr]) expect(out).not.toContain(token);
  });

  it('includes the commands in --json output', async () => {
    const { stdout } = await forge(['tool', 'run', 'report', '--param', 'name=x', '--show-command', '--json'], project(), scopes().env);
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({ ok: true, value: 'got: x|2|' });
    expect(result.commands).toMatchObject([
      { tool: 'report', step: 'list', argv: ['printf', '%s|', 'x', '2'], env: { WHO: 'x' } },
      { tool: 'report', step: 'say', argv: ['bash', '<script>'] },
    ]);
  });
});

describe('forge build with scope tools', () => {
  it('rebuilds when a user-scope tool the project uses changes, or a tool appears in the scope', async () => {
    const { env, home } = scopes();
    mkdirSync(join(home, 'tools'));
    writeFileSync(join(home, 'tools/shout.yaml'), 'description: Shouts.\nbash: echo\n');
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/meta.yaml': 'description: Meta.\nsteps:\n  - tool: shout\n' });
    const cached = async () => JSON.parse((await forge(['build', '--json'], dir, env)).stdout).cached as boolean;
    expect(await cached()).toBe(false);
    expect(await cached()).toBe(true);
    writeFileSync(join(home, 'tools/shout.yaml'), 'description: Shouts louder.\nbash: echo\n');
    expect(await cached()).toBe(false);
    expect(await cached()).toBe(true);
    writeFileSync(join(home, 'tools/other.yaml'), 'description: Other.\nbash: echo\n');
    expect(await cached()).toBe(false);
  });

  it('does not search the scopes, nor rebuild when they change, when the project has every tool it calls', async () => {
    const { env, home } = scopes();
    mkdirSync(join(home, 'tools'));
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/shout.yaml': 'description: Shouts.\nbash: echo\n', 'tools/meta.yaml': 'description: Meta.\nsteps:\n  - tool: shout\n' });
    const cached = async () => JSON.parse((await forge(['build', '--json'], dir, env)).stdout).cached as boolean;
    expect(await cached()).toBe(false);
    writeFileSync(join(home, 'tools/shout.yaml'), 'description: Another shout.\nbash: echo\n');
    expect(await cached()).toBe(true);
  });
});

describe('forge tool check', () => {
  it('prints what each tool needs and where it was found', async () => {
    const { env, home } = scopes();
    mkdirSync(join(home, 'tools'));
    writeFileSync(join(home, 'tools/shout.yaml'), 'description: Shouts.\nversion: 1.3.0\nbash: echo\n');
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/meta.yaml': 'description: Meta.\ndependencies: [shout@^1.0.0]\nsteps:\n  - tool: shout\n' });
    const { code, stdout } = await forge(['tool', 'check'], dir, env);
    expect(code).toBe(0);
    expect(stdout).toMatch(/meta\s+tools\/meta\.yaml/);
    expect(stdout).toMatch(/└─ shout@\^1\.0\.0\s+→ 1\.3\.0 .*shout\.yaml \(user scope\)/);
    expect(stdout).toContain('✓ every tool\'s needs: found, satisfied, no cycles');
  });

  it('exits 1 with the chain for a missing dependency, only for the tool asked about', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/a.yaml': 'description: A.\nsteps:\n  - tool: b\n',
      'tools/b.yaml': 'description: B.\ndependencies: [summarize@^2.0.0]\nbash: echo\n',
      'tools/other.yaml': 'description: Other.\nbash: echo\n',
    });
    const failing = await forge(['tool', 'check', 'a'], dir, scopes().env);
    expect(failing.code).toBe(1);
    expect(failing.stderr).toContain('tools/b.yaml:2:16 FORGE_TOOL_DEPENDENCY a → b → summarize@^2.0.0: no scope has a tool named "summarize"');
    const fine = await forge(['tool', 'check', 'other'], dir, scopes().env);
    expect(fine.code).toBe(0);
    expect(fine.stderr).not.toContain('summarize');
  });
});

describe('forge tool check on a file that does not load', () => {
  it("prints the errors of the file that declares the tool, not FORGE_TOOL_UNKNOWN", async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/reorder_plan.yaml': 'name: reorder_plan\ndescription: Plans a reorder.\nbash: echo plan\ntimeout: forever\n' });
    const text = await forge(['tool', 'check', 'reorder_plan'], dir, scopes().env);
    expect(text.code).toBe(1);
    expect(text.stderr).toMatch(/tools\/reorder_plan\.yaml:4:10 FORGE_YAML_VALUE /);
    expect(text.stderr).toContain('tool "reorder_plan" cannot be checked: its file has errors');
    expect(text.stderr).not.toContain('FORGE_TOOL_UNKNOWN');
    const json = JSON.parse((await forge(['tool', 'check', 'reorder_plan', '--json'], dir, scopes().env)).stdout);
    expect(json).toMatchObject({ ok: false, diagnostics: [{ file: 'tools/reorder_plan.yaml', line: 4, code: 'FORGE_YAML_VALUE' }] });
  });
});

describe('approval from the command line', () => {
  const project = () =>
    writeProject({
      'forge.yaml': minimalConfig(),
      'tools/write_a.yaml': 'description: Writes a.\ntags: [write]\nbash: echo a >> written.txt\n',
      'tools/write_b.yaml': 'description: Writes b.\ntags: [write]\nbash: echo b >> written.txt\n',
      'tools/peek.yaml': 'description: Reads.\ntags: [read]\nbash: cat written.txt 2>/dev/null || true\n',
      'tools/each.yaml': 'description: Writes both; each write confirmed.\ntags: [write]\nsteps:\n  - tool: peek\n  - tool: write_a\n  - tool: write_b\n',
      'tools/once.yaml': 'description: Writes both; confirmed once.\ntags: [write]\nsingle-confirmation: true\nsteps:\n  - tool: write_a\n  - tool: write_b\n',
      'tools/outer_once.yaml': 'description: Calls once.\ntags: [read]\nsteps:\n  - tool: once\n',
      'tools/outer_each.yaml': 'description: Calls each.\ntags: [read]\nsteps:\n  - tool: each\n',
    });
  const written = (dir: string) => (existsSync(join(dir, 'written.txt')) ? readFileSync(join(dir, 'written.txt'), 'utf8') : '');

  it('refuses sub-calls that need confirmation without a terminal, and runs them with --yes', async () => {
    const dir = project();
    const refused = await forge(['tool', 'run', 'each'], dir, scopes().env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('FORGE_APPROVAL_REQUIRED');
    expect(refused.stderr).toContain("hint: add a rule to approval.auto_approve in forge.yaml (a built bundle: agent.json's, or --auto-approve); from a terminal, forge tool run and the bundle's call ask, and --yes approves such calls");
    expect(written(dir)).toBe('');
    const yes = await forge(['tool', 'run', 'each', '--yes'], dir, scopes().env);
    expect(yes.code, yes.stderr).toBe(0);
    expect(written(dir)).toBe('a\nb\n');
  });

  it('applies --auto-approve and --auto-deny rules, deny winning', async () => {
    const dir = project();
    expect((await forge(['tool', 'run', 'each', '--auto-approve', 'name:write_*'], dir, scopes().env)).code).toBe(0);
    const denied = await forge(['tool', 'run', 'each', '--auto-approve', 'tag:*', '--auto-deny', 'name:write_b'], dir, scopes().env);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain('tool "write_b" is refused by the approval rule "name:write_b"');
    const bad = await forge(['tool', 'run', 'each', '--auto-deny', 'write_b'], dir, scopes().env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not an approval rule');
  });

  it("checks forge.yaml's own approval rules without any on the command line: a misspelt auto_deny of a tool the project has refuses the run, a misspelt auto_approve warns", async () => {
    const dir = project();
    const config = (approval: string) => writeFileSync(join(dir, 'forge.yaml'), minimalConfig(`approval:\n${approval}`));
    config('  auto_deny: [name:write_bb]\n');
    const typo = await forge(['tool', 'run', 'each', '--yes'], dir, scopes().env);
    // forge.yaml's mistake, not the command line's: a failure (1), as forge run and forge build give, not a usage error.
    expect(typo.code, typo.stderr).toBe(1);
    expect(typo.stderr).toContain('forge.yaml:5:15 FORGE_APPROVAL_UNMATCHED auto_deny rule "name:write_bb" matches no tool: no tool is named "write_bb", so "write_b" is not refused');
    expect(written(dir)).toBe('');
    config('  auto_approve: [name:write_aa]\n');
    const approve = await forge(['tool', 'run', 'each', '--yes'], dir, scopes().env);
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stderr).toContain('forge.yaml:5:18 FORGE_APPROVAL_UNMATCHED auto_approve rule "name:write_aa" matches no tool: no tool is named "write_aa"');
    expect(written(dir)).toBe('a\nb\n');
  });

  it('refuses a --auto-deny rule that misspells a tool the project has before anything runs, and warns of a misspelt --auto-approve', async () => {
    const dir = project();
    const typo = await forge(['tool', 'run', 'each', '--yes', '--auto-deny', 'name:write_bb'], dir, scopes().env);
    expect(typo.code, typo.stderr).toBe(2);
    expect(typo.stderr).toContain('✘ FORGE_APPROVAL_UNMATCHED --auto-deny rule "name:write_bb" matches no tool: no tool is named "write_bb", so "write_b" is not refused\n  hint: did you mean "name:write_b"?');
    expect(written(dir)).toBe('');
    const approve = await forge(['tool', 'run', 'each', '--yes', '--auto-approve', 'tag:wirte'], dir, scopes().env);
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stderr).toContain('▲ FORGE_APPROVAL_UNMATCHED --auto-approve rule "tag:wirte" matches no tool: no tool is tagged "wirte"\n  hint: did you mean "tag:write"?');
    expect(written(dir)).toBe('a\nb\n');
  });

  it('follows forge.yaml\'s approval rules', async () => {
    const dir = project();
    writeFileSync(join(dir, 'forge.yaml'), minimalConfig('approval:\n  auto_approve: ["tag:*"]\n  auto_deny: ["name:write_a"]\n'));
    const result = await forge(['tool', 'run', 'each'], dir, scopes().env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('refused by the approval rule "name:write_a"');
  });

  it.each([
    ['outer_each', ['y', 'y', 'y'], ['each', 'write_a', 'write_b'], 'a\nb\n'],
    ['outer_once', ['y'], ['once'], 'a\nb\n'],
    ['once', [], [], 'a\nb\n'],
    ['outer_each', ['y', 'y', 'n'], ['each', 'write_a', 'write_b'], 'a\n'],
  ])('on a terminal, %s asks exactly for %j', async (tool, answers, asked, expected) => {
    const dir = project();
    const { code, stdout } = await runOnTerminal([process.execPath, forgeBin, 'tool', 'run', tool], { cwd: dir, env: scopes().env, answers });
    const prompts = [...stdout.matchAll(/\? "([a-z_]+)" needs your confirmation/g)].map((m) => m[1]);
    expect(prompts).toEqual(asked);
    expect(written(dir)).toBe(expected);
    expect(code).toBe(answers.includes('n') ? 1 : 0);
    if (tool === 'outer_once') expect(stdout).toContain('this also confirms every call it makes to: write_a, write_b');
  });
});
