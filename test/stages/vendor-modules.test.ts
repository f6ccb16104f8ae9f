/**
 * The prebuilt third-party modules (dist/runtime-vendor/) written beside
 * runtime.mjs: only those the agent uses, and the bundle runs with them
 * from a directory holding nothing but the output.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { esbuild, REQUIRE_SHIM } from '../../stages/esbuild-api.ts';
import { vendorModules } from '../../stages/vendor-modules.ts';
import { deployBundle, forge, minimalConfig, repoRoot, runProcess, tempDir, writeProject } from '../helpers/project.ts';

describe('the prebuilt vendor modules in a build', () => {
  it('writes ajv, the small libraries and the protocol SDKs beside runtime.mjs, and the YAML parser only for an agent with YAML tools', async () => {
    const plain = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    const withYaml = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/greet.yaml': 'description: Greets.\ntags: [read]\nparameters:\n  name: { type: string }\nbash: printf "hello %s" {name}\n',
    });
    for (const project of [plain, withYaml]) expect((await forge(['build', '--prod'], project)).code).toBe(0);
    const plainText = readFileSync(join(plain, '.forge-output', 'forge-runtime.cjs'), 'utf8');
    const yamlText = readFileSync(join(withYaml, '.forge-output', 'forge-runtime.cjs'), 'utf8');
    const vendorFiles = (project: string) => readdirSync(join(project, '.forge-output', 'vendor')).sort();
    expect(vendorFiles(plain)).toEqual(['a2a.cjs', 'ajv.cjs', 'libs.cjs', 'mcp.cjs']);
    expect(vendorFiles(withYaml)).toEqual(['a2a.cjs', 'ajv.cjs', 'libs.cjs', 'mcp.cjs', 'yaml.cjs']);
    // The runtime core loads them from there, and carries none of their code.
    expect(plainText).toContain('"vendor/ajv.cjs"');
    expect(plainText).not.toContain('"vendor/yaml.cjs"');
    expect(yamlText).toContain('"vendor/yaml.cjs"');
    expect(plainText).not.toContain('json-schema.org/draft-07/schema');
    // Nor the MCP SDK's message schemas (zod): the protocol versions are in it as values.
    expect(plainText).not.toContain('_zod');
    expect(plainText).toMatch(/"2025-\d\d-\d\d"/);

    // Arguments are checked by the spliced ajv; the YAML tool is read by the spliced parser.
    const deployed = deployBundle(withYaml).bundle;
    const bad = await runProcess(process.execPath, [join(deployed, 'runtime.mjs'), 'call', 'greet', '{"name": 3}'], { cwd: deployed });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('name');
    const good = await runProcess(process.execPath, [join(deployed, 'runtime.mjs'), 'call', 'greet', '{"name": "ada"}'], { cwd: deployed });
    expect(good.stdout.trim()).toBe('hello ada');
  });

  it("reads the YAML parser only where YAML is parsed: a TS tool's worker in an agent with YAML tools never loads it", async () => {
    const project = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/greet.yaml': 'description: Greets.\ntags: [read]\nparameters:\n  name: { type: string }\nbash: printf "hello %s" {name}\n',
      'tools/shout.ts': '/**\n * Tool: shout\n * Description: Upper-cases a message.\n * Tags: read\n *\n * Input:\n *   message (str): The message.\n */\nexport function execute(args: { message: string }) { return args.message.toUpperCase(); }\n',
    });
    expect((await forge(['build', '--prod'], project)).code).toBe(0);
    const { bundle } = deployBundle(project);
    // Which prebuilt modules a process reads (each is read once, when it is evaluated).
    const preload = join(tempDir(), 'vendor-reads.cjs');
    writeFileSync(
      preload,
      `const fs = require('node:fs'); const real = fs.readFileSync; const seen = [];\n` +
        `fs.readFileSync = function (path, ...rest) { if (typeof path === 'string' && path.includes('vendor')) seen.push(path.split(/[\\\\/]/).pop()); return real.call(this, path, ...rest); };\n` +
        `process.on('exit', () => process.stderr.write('vendor reads: ' + JSON.stringify(seen) + '\\n'));\n`,
    );
    const vendorReads = (run: { stderr: string }) => JSON.parse(/vendor reads: (.*)/.exec(run.stderr)![1]) as string[];
    // The worker that serves the TS tool's calls (stdin closed: it starts, then stops).
    const worker = await runProcess(process.execPath, ['--require', preload, join(bundle, 'runtime.mjs'), '__worker', 'shout'], { cwd: bundle });
    expect(worker.code, worker.stderr).toBe(0);
    expect(vendorReads(worker)).not.toContain('yaml.cjs');
    // The runtime assembled with the YAML tool reads it: the preload sees what it is meant to.
    const tools = await runProcess(process.execPath, ['--require', preload, join(bundle, 'runtime.mjs'), 'tools'], { cwd: bundle });
    expect(tools.stdout).toContain('greet');
    expect(vendorReads(tools)).toContain('yaml.cjs');
    const call = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'call', 'shout', '{"message": "hi"}'], { cwd: bundle });
    expect(call.stdout.trim()).toBe('HI');
  });

  it('evaluates the small libraries and the YAML parser on first use, not when the bundle loads, and the stand-ins behave as the real values', async () => {
    const dir = tempDir();
    const libs = join(repoRoot, 'runtime', 'vendor', 'libs.ts');
    const yaml = join(repoRoot, 'runtime', 'vendor', 'yaml.ts');
    // Counts the vendor code compiled (a node:vm Script per module, code-cache.ts), so the test sees when the module is evaluated.
    const counter = `globalThis.__compiled = 0; const __vm = require('node:vm'); const __RealScript = __vm.Script; __vm.Script = class extends __RealScript { constructor(...args) { super(...args); globalThis.__compiled++; } };`;
    const entry = join(dir, 'entry.ts');
    writeFileSync(
      entry,
      [
        // Relative, as the runtime's own modules import it.
        `import { Cron, distance, ipaddr, picomatch } from ${JSON.stringify(relative(dir, libs))};`,
        `import { isScalar, LineCounter, parse, parseDocument } from ${JSON.stringify(relative(dir, yaml))};`,
        `const atLoad = globalThis.__compiled;`,
        `const d = distance('kitten', 'sitting');`,
        `const afterCall = globalThis.__compiled;`,
        `const parsed = parse('a: [1, two]');`,
        `const afterYaml = globalThis.__compiled;`,
        `const counter = new LineCounter();`,
        `const doc = parseDocument('x: 1\\ny: 2\\n', { lineCounter: counter });`,
        `const yamlSeen = { parsed, counted: counter instanceof LineCounter && counter.lineStarts.length, scalar: isScalar(doc.get('y', true)) };`,
        `const cron = new Cron('0 9 * * 1', { paused: true });`,
        `class Daily extends Cron {}`,
        `const daily = new Daily('0 9 * * *', { paused: true });`,
        `const ip = ipaddr.parse('10.1.2.3');`,
        `console.log(JSON.stringify({ atLoad, afterCall, afterYaml, yamlSeen, total: globalThis.__compiled, d, cronIsCron: cron instanceof Cron, dailyIsCron: daily instanceof Cron, dailyNext: daily.nextRun(new Date('2026-01-01T00:00:00Z'))?.toISOString().slice(11, 16), range: ip.range(), glob: picomatch('*.py')('a.py'), scan: picomatch.scan('src/*.ts').base }));`,
      ].join('\n'),
    );
    const splice = vendorModules();
    expect(splice).toBeDefined();
    // Without the splice the libraries would be bundled from source and the count would say nothing.
    const spliced = (text: string) => text.includes('"vendor/libs.cjs"') && text.includes('"vendor/yaml.cjs"');
    const built = await esbuild.build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', write: false, banner: { js: REQUIRE_SHIM }, plugins: [splice!.plugin], logLevel: 'silent' });
    const text = built.outputFiles[0].text;
    expect(spliced(text)).toBe(true);
    const firstLineEnd = text.indexOf('\n') + 1;
    writeFileSync(join(dir, 'out.mjs'), text.slice(0, firstLineEnd) + counter + '\n' + text.slice(firstLineEnd));
    for (const module of splice!.outputs()) {
      mkdirSync(join(dir, dirname(module.path)), { recursive: true });
      writeFileSync(join(dir, module.path), module.contents);
    }
    const run = await runProcess(process.execPath, [join(dir, 'out.mjs')], { cwd: dir });
    expect(run.stderr).toBe('');
    const seen = JSON.parse(run.stdout);
    expect(seen).toMatchObject({ atLoad: 0, afterCall: 1, afterYaml: 2, yamlSeen: { parsed: { a: [1, 'two'] }, counted: 3, scalar: true }, total: 2, d: 3, cronIsCron: true, dailyIsCron: true, range: 'private', glob: true, scan: 'src' });
    // The subclass runs the real class's code (its own timezone handling), not a stand-in's.
    expect(seen.dailyNext).toMatch(/^\d\d:00$/);
  });
});
