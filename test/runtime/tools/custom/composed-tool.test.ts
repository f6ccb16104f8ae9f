/**
 * Composed TypeScript tools: execute(args, ctx) runs in a worker process,
 * and ctx.registry.execute reaches the host, which runs the sub-tool through
 * the caller's scoped registry and under the approval policy.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalPolicy } from '../../../../runtime/guard/approval-policy.ts';
import type { ApprovalRequest, Approver } from '../../../../runtime/guard/approver.ts';
import { createCustomTool } from '../../../../runtime/tools/custom/custom-tool.ts';
import { ok, type Tool } from '../../../../runtime/tools/model.ts';
import { ToolRegistry } from '../../../../runtime/tools/registry.ts';
import { parseToolFile } from '../../../../stages/parse-docstrings.ts';
import { createSourceNodeLauncher } from '../../../../stages/source-node-launcher.ts';
import { tempDir } from '../../../helpers/project.ts';

const registries: ToolRegistry[] = [];
afterEach(async () => {
  await Promise.all(registries.splice(0).map((r) => r.close()));
});

class CountingApprover implements Approver {
  readonly requests: ApprovalRequest[] = [];
  async approve(request: ApprovalRequest) {
    this.requests.push(request);
    return true;
  }
  get asked() {
    return this.requests.map((r) => r.tool);
  }
}

/** In-process sub-tools that work on files in the work dir. */
function fileTools(dir: string): Tool[] {
  const schema = { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } }, required: ['path'] };
  return [
    { name: 'read_text', description: 'Read.', category: 'builtin', tags: ['read'], inputSchema: schema, execute: async (a) => ok(readFileSync(join(dir, (a as { path: string }).path), 'utf8')) },
    {
      name: 'write_text',
      description: 'Write.',
      category: 'builtin',
      tags: ['write'],
      inputSchema: schema,
      execute: async (a) => {
        const { path, text } = a as { path: string; text: string };
        writeFileSync(join(dir, path), text);
        return ok({ written: text.length });
      },
    },
    { name: 'secret', description: 'Not composed.', category: 'builtin', tags: ['read'], inputSchema: { type: 'object' }, execute: async () => ok('secret') },
  ];
}

const composedSource = (header: string) => `/**
 * Tool: shout_file
 * Description: Upper-cases a file: reads it, writes it back once.
${header}
 * Input:
 *   path (str): The file.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export async function execute(args, ctx) {
  const [a, b] = await Promise.all([ctx.registry.execute('read_text', { path: args.path }), ctx.registry.execute('read_text', { path: args.path })]);
  if (!a.ok || !b.ok) throw new Error('read failed');
  const scratch = join(ctx.tmpDir, 'draft.txt');
  writeFileSync(scratch, a.value.toUpperCase());
  const wrote = await ctx.registry.execute('write_text', { path: args.path, text: a.value.toUpperCase() });
  const refused = await ctx.registry.execute('secret', {});
  return { same: a.value === b.value, wrote: wrote.ok ? wrote.value : wrote.error.code, refused: refused.ok ? 'reached' : refused.error.code, tmpDir: ctx.tmpDir, draft: existsSync(scratch), depth: ctx.depth, signal: ctx.signal instanceof AbortSignal && !ctx.signal.aborted && ctx.signal === ctx.signal, log: typeof ctx.log.info, workDir: ctx.workDir === process.cwd() };
}
`;

function setUp(header: string) {
  const dir = tempDir('forge-composed-');
  writeFileSync(join(dir, 'shout_file.ts'), composedSource(header));
  writeFileSync(join(dir, 'notes.txt'), 'hello');
  const { spec, diagnostics } = parseToolFile({ absolute: join(dir, 'shout_file.ts'), relative: 'shout_file.ts', display: 'shout_file.ts', kind: 'typescript' });
  expect(diagnostics).toEqual([]);
  const registry = new ToolRegistry({ workDir: dir, approval: ApprovalPolicy.create(undefined) });
  registries.push(registry);
  registry.register(createCustomTool(spec!, { workDir: dir, resolveSource: (p) => join(dir, p), node: createSourceNodeLauncher(dir) }), 'shout_file.ts');
  for (const tool of fileTools(dir)) registry.register(tool, 'test');
  return { dir, registry, spec: spec! };
}

describe('a composed TypeScript tool', () => {
  it('declares composedOf and singleConfirmation in its docstring', () => {
    const { spec } = setUp(' * Composed Of: read_text, write_text\n * Atomic: yes');
    expect(spec).toMatchObject({ composedOf: ['read_text', 'write_text'], singleConfirmation: true, source: { style: 'execute' } });
  });

  it('calls the tools in its composedOf through the host, and nothing else', async () => {
    const { dir, registry } = setUp(' * Composed Of: read_text, write_text');
    const result = await registry.execute('shout_file', { path: 'notes.txt' }, { approver: new CountingApprover(), approved: true });
    expect(result).toMatchObject({ ok: true, value: { same: true, wrote: { written: 5 }, refused: 'FORGE_TOOL_NOT_COMPOSED', draft: true, depth: 0, signal: true, log: 'function', workDir: true } });
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('HELLO');
  });

  it('gets a fresh ctx.tmpDir for each call, removed when the call ends', async () => {
    const { registry } = setUp(' * Composed Of: read_text, write_text');
    const approver = new CountingApprover();
    const first = await registry.execute('shout_file', { path: 'notes.txt' }, { approver, approved: true });
    const second = await registry.execute('shout_file', { path: 'notes.txt' }, { approver, approved: true });
    const dirs = [first, second].map((r) => (r.ok ? (r.value as { tmpDir: string }).tmpDir : ''));
    expect(dirs[0]).not.toBe(dirs[1]);
    for (const d of dirs) expect(existsSync(d)).toBe(false);
  });

  it('with singleConfirmation, is confirmed exactly once for the whole call', async () => {
    const { registry } = setUp(' * Composed Of: read_text, write_text\n * Single Confirmation: yes');
    const approver = new CountingApprover();
    expect(await registry.execute('shout_file', { path: 'notes.txt' }, { approver })).toMatchObject({ ok: true });
    expect(approver.asked).toEqual(['shout_file']);
    expect(approver.requests[0].covers).toEqual(['write_text']);
  });

  it('without it, has each sub-call that needs confirmation confirmed on its own', async () => {
    const { registry } = setUp(' * Composed Of: read_text, write_text');
    const approver = new CountingApprover();
    expect(await registry.execute('shout_file', { path: 'notes.txt' }, { approver })).toMatchObject({ ok: true });
    // The tool itself (no security tag: counts as run), then its one write; the reads are auto-approved.
    expect(approver.asked).toEqual(['shout_file', 'write_text']);
    expect(approver.requests[1].parents).toEqual(['shout_file']);
  });

  it('fails the sub-call, not the worker, when a sub-tool is refused', async () => {
    const { dir, registry } = setUp(' * Composed Of: read_text, write_text');
    const result = await registry.execute('shout_file', { path: 'notes.txt' }, { approved: true });
    expect(result).toMatchObject({ ok: true, value: { wrote: 'FORGE_APPROVAL_REQUIRED' } });
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('hello');
  });
});

describe('Composed Of on tools that cannot call the host', () => {
  it.each([
    ['a Python tool', 'tool.py', '"""\nTool: composed_py\nDescription: d\nComposed Of: read_text\n"""\ndef execute(args):\n    return 1\n', 'python'],
    ['a script-style TypeScript tool', 'tool.ts', '/**\n * Tool: composed_script\n * Description: d\n * Composed Of: read_text\n */\nconsole.log(1);\n', 'typescript'],
  ] as const)('is refused on %s', (_what, file, source, kind) => {
    const dir = tempDir();
    writeFileSync(join(dir, file), source);
    const { diagnostics } = parseToolFile({ absolute: join(dir, file), relative: file, display: file, kind });
    expect(diagnostics).toMatchObject([{ severity: 'error', code: 'FORGE_DOCSTRING_COMPOSED', file, line: 4 }]);
  });
});
