import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fail, ok, type Tool, type ToolContext } from '../../../runtime/tools/model.ts';
import { MAX_COMPOSITION_DEPTH, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { clientCalls } from '../../../runtime/server/client-calls.ts';
import { sessionView } from '../../../runtime/tools/emergent/session-view.ts';
import { StateUnavailableError } from '../../../runtime/store-unavailable.ts';
import { secretFromEnv } from '../../../runtime/secrets.ts';

function tool(name: string, overrides: Partial<Tool> = {}): Tool {
  return {
    name,
    description: `${name} tool`,
    category: 'custom',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    tags: ['read'],
    execute: async (args) => ok(args),
    ...overrides,
  };
}

const registry = () => new ToolRegistry({ workDir: process.cwd() });

describe('ToolRegistry', () => {
  it('rejects a second tool with the same name, naming both sources', () => {
    const r = registry();
    expect(r.register(tool('dup'), 'tools/a.py')).toBeUndefined();
    const problem = r.register(tool('dup'), 'tools/b.ts');
    expect(problem).toMatchObject({ code: 'FORGE_TOOL_COLLISION', severity: 'error' });
    expect(problem!.message).toContain('tools/a.py');
    expect(problem!.message).toContain('tools/b.ts');
    expect(r.originOf('dup')).toBe('tools/a.py');
  });

  it('reserves "__" for adapter tools', () => {
    const r = registry();
    expect(r.register(tool('fs__read'), 'tools/x.py')).toMatchObject({ code: 'FORGE_TOOL_NAME' });
    expect(r.register(tool('fs__read', { category: 'adapter' }), 'mcp:fs')).toBeUndefined();
  });

  it.each(['', 'has space', 'a'.repeat(65), 'dot.ted'])('rejects the invalid name %j', (name) => {
    expect(registry().register(tool(name), 'x')).toMatchObject({ code: 'FORGE_TOOL_NAME' });
  });

  it('lists tools sorted by name', () => {
    const r = registry();
    for (const name of ['b', 'c', 'a']) r.register(tool(name), name);
    expect(r.list().map((t) => t.name)).toEqual(['a', 'b', 'c']);
  });

  it('validates arguments before execute, naming the field', async () => {
    const r = registry();
    let called = false;
    r.register(
      tool('typed', {
        inputSchema: { type: 'object', properties: { days: { type: 'integer' }, city: { type: 'string' } }, required: ['city'], additionalProperties: false },
        execute: async () => {
          called = true;
          return ok(null);
        },
      }),
      'x',
    );
    const result = await r.execute('typed', { days: 'two', extra: 1 });
    expect(called).toBe(false);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe('FORGE_TOOL_ARGS');
    expect(result.error.message).toContain('missing required argument "city"');
    expect(result.error.message).toContain('argument "days" must be an integer');
    expect(result.error.message).toContain('unknown argument "extra"');
    // What it takes, with the types, for any caller (a model, a script, a bundle with no forge command to describe it).
    expect(result.error.hint).toBe('its arguments: days (integer), city (string, required)');
  });

  it('answers an unknown name with only the tools the calling session may see, and a name of any length briefly', async () => {
    const r = registry();
    r.register(tool('visible_one'), 'x');
    r.register({ ...tool('zz_private'), forged: { tier: 'session', owner: 'mcp:c' } } as Tool, 'x');
    // As a composition's missing step reaches it, with the caller's session.
    const asB = await r.execute('nosuch', {}, { session: 'mcp:b' });
    expect(asB).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_UNKNOWN', hint: 'the tools you can call: visible_one' } });
    expect(await r.execute('zz_privat', {}, { session: 'mcp:b' })).toMatchObject({ ok: false, error: { hint: 'the tools you can call: visible_one' } });
    expect(await r.execute('zz_privat', {}, { session: 'mcp:c' })).toMatchObject({ ok: false, error: { hint: 'did you mean "zz_private"?' } });
    const long = await r.execute('x'.repeat(1_000_000), {});
    expect(long.ok || long.error.message.length).toBeLessThan(100);
  });

  it("runs another session's forged tool for no one but the person at the command line, however the call reaches it", async () => {
    const r = registry();
    let ran = 0;
    const theirs = { ...tool('their_tool', { execute: async () => (ran++, ok('secret')) }), forged: { tier: 'session', owner: 'context:a' } } as Tool;
    r.register(theirs, 'x');
    r.register(tool('composer', { composedOf: ['their_tool'], execute: async (_args, ctx) => ctx.registry.execute('their_tool', {}) }), 'x');
    // Directly, from another session or none (REST); through a composition, whose calls carry the caller's session.
    for (const session of ['context:b', undefined]) {
      expect(await r.execute('their_tool', {}, session ? { session } : {})).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_UNKNOWN' } });
      expect(await r.execute('composer', {}, session ? { session } : {})).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_UNKNOWN' } });
    }
    // forge_tool's test of a hidden candidate reaches the candidate, not what the session cannot see.
    expect(await r.execute('composer', {}, { session: 'context:b', sees: 'this-tool' })).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_UNKNOWN' } });
    expect(ran).toBe(0);
    expect(await r.execute('composer', {}, { session: 'context:a' })).toMatchObject({ ok: true, value: 'secret' });
    expect(await r.execute('their_tool', {}, { sees: 'this-tool' })).toMatchObject({ ok: true, value: 'secret' });
    expect(await r.execute('composer', {}, { sees: 'everything' })).toMatchObject({ ok: true, value: 'secret' });
    expect(ran).toBe(3);
  });

  it('checks a tool its own look-up registered just now (forged on another replica) as any other', async () => {
    // The other replica's record lands at the front end's look-up (describe), or at any look-up the call makes after it.
    for (const registeredAt of [1, 2, 3]) {
      const r = registry();
      let ran = false;
      let lookups = 0;
      r.setLookup(async () => {
        if (++lookups === registeredAt) r.register({ ...tool('late_tool', { execute: async () => ((ran = true), ok('secret')) }), forged: { tier: 'session', owner: 'context:a' } } as Tool, 'x');
      });
      const view = sessionView(clientCalls(r), 'context:b');
      expect(await view.resolve!('late_tool')).toBeUndefined();
      const result = await view.execute('late_tool', {});
      expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_UNKNOWN', message: 'no tool named "late_tool"' } });
      expect(ran).toBe(false);
      // Each round's registration happened when its look-up was made (a third is made only by code that looks up once more).
      expect(r.has('late_tool')).toBe(lookups >= registeredAt);
    }
  });

  it('answers arguments nested past the validator\'s stack as the caller\'s (FORGE_TOOL_ARGS), not as a schema that cannot be compiled', async () => {
    const r = registry();
    r.register(tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }), 'tools/echo.ts');
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = { a: deep };
    const result = await r.execute('echo', { text: 'x', deep });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_ARGS', message: 'invalid arguments for "echo": they nest more than 64 levels deep' } });
    // The registry goes on: the next call is checked as any other.
    expect(await r.execute('echo', { text: 'x' })).toMatchObject({ ok: true });
  });

  it('says a tool takes no arguments, and names at most 20 of many', async () => {
    const r = registry();
    const many = Object.fromEntries(Array.from({ length: 23 }, (_, i) => [`a${i}`, { type: 'string' }]));
    r.register(tool('none', { inputSchema: { type: 'object', properties: {}, additionalProperties: false } }), 'x');
    r.register(tool('many', { inputSchema: { type: 'object', properties: many, additionalProperties: false } }), 'x');
    expect(await r.execute('none', { x: 1 })).toMatchObject({ ok: false, error: { hint: 'it takes no arguments' } });
    const result = await r.execute('many', { x: 1 });
    expect(result).toMatchObject({ ok: false, error: { hint: `its arguments: ${Array.from({ length: 20 }, (_, i) => `a${i} (string)`).join(', ')}, and 3 more` } });
  });

  it('fills schema defaults without changing the caller\'s object', async () => {
    const r = registry();
    r.register(tool('defaults', { inputSchema: { type: 'object', properties: { n: { type: 'integer', default: 3 } } } }), 'x');
    const args = {};
    const result = await r.execute('defaults', args);
    expect(result).toMatchObject({ ok: true, value: { n: 3 } });
    expect(args).toEqual({});
  });

  it('suggests the closest name for an unknown tool', async () => {
    const r = registry();
    r.register(tool('word_count'), 'x');
    const result = await r.execute('word_cuont', {});
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_UNKNOWN', hint: 'did you mean "word_count"?' } });
  });

  it('turns a thrown error into an error result', async () => {
    const r = registry();
    r.register(tool('throws', { execute: async () => { throw new Error('boom'); } }), 'x');
    const result = await r.execute('throws', {});
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_FAILED', message: 'tool "throws" failed: boom' } });
  });

  it("reports a tool's own refused or dropped connection as the tool's failure, not the state store's", async () => {
    const r = registry();
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', errno: -111, syscall: 'connect' });
    r.register(tool('own_db', { execute: async () => { throw refused; } }), 'x');
    r.register(tool('own_pg', { execute: async () => { throw Object.assign(new Error('Connection terminated unexpectedly'), { code: '08006' }); } }), 'x');
    for (const name of ['own_db', 'own_pg']) {
      const result = await r.execute(name, {});
      expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_FAILED' } });
      expect(result.ok ? undefined : result.error.retryAfterSeconds).toBeUndefined();
    }
  });

  it('reports the state store away, as the store says, as FORGE_STATE_UNAVAILABLE with a retry after 1 s and the driver\'s line for the log only', async () => {
    const r = registry();
    r.register(tool('uses_store', { execute: async () => { throw new StateUnavailableError(new Error('connect ECONNREFUSED 10.0.0.5:5432')); } }), 'x');
    const result = await r.execute('uses_store', {});
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_STATE_UNAVAILABLE', message: 'tool "uses_store" failed: the state store cannot be reached right now', hint: expect.stringContaining('retry'), details: 'connect ECONNREFUSED 10.0.0.5:5432', retryAfterSeconds: 1 } });
  });

  it('turns an execute() that throws before returning a promise into an error result', async () => {
    const r = registry();
    r.register(tool('sync_throw', { execute: () => { throw new Error('at once'); } }), 'x');
    expect(await r.execute('sync_throw', {})).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_FAILED', message: 'tool "sync_throw" failed: at once' } });
  });

  it('turns a result that throws when read into an error result, not a rejected call', async () => {
    const r = registry();
    r.register(tool('hostile', { execute: async () => ({ get ok(): boolean { throw new Error('read me not'); } }) as never }), 'x');
    const result = await r.execute('hostile', {});
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_FAILED', message: 'tool "hostile" failed: read me not' } });
  });

  it('times out a tool that never finishes and aborts its signal', async () => {
    const r = registry();
    let signal: AbortSignal | undefined;
    r.register(tool('slow', { timeoutMs: 50, execute: (_args, ctx) => { signal = ctx.signal; return new Promise(() => {}); } }), 'x');
    const result = await r.execute('slow', {});
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_TIMEOUT' } });
    expect(signal?.aborted).toBe(true);
  });

  it('makes no AbortSignal for a call whose tool never asks for one, and one for a tool that does', async () => {
    const r = registry();
    r.register(tool('plain'), 'x');
    r.register(tool('asks', { execute: async (_args, ctx) => ok(ctx.signal.aborted) }), 'x');
    const Original = globalThis.AbortController;
    let made = 0;
    globalThis.AbortController = class extends Original {
      constructor() {
        super();
        made++;
      }
    };
    try {
      expect(await r.execute('plain', {})).toMatchObject({ ok: true });
      expect(made).toBe(0);
      expect(await r.execute('asks', {})).toMatchObject({ ok: true, value: false });
      expect(made).toBe(1);
    } finally {
      globalThis.AbortController = Original;
    }
  });

  it('hands a tool that first looks at its signal after the timeout an aborted one', async () => {
    const r = registry();
    let late: Promise<{ aborted: boolean; reason: unknown }> | undefined;
    r.register(
      tool('late', {
        timeoutMs: 20,
        execute: (_args, ctx) => {
          late = new Promise((resolve) => setTimeout(() => resolve({ aborted: ctx.signal.aborted, reason: ctx.signal.reason }), 80));
          return new Promise(() => {});
        },
      }),
      'x',
    );
    expect(await r.execute('late', {})).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_TIMEOUT' } });
    const seen = await late!;
    expect(seen.aborted).toBe(true);
    expect((seen.reason as Error).message).toBe('timeout');
  });

  it('cancels a call whose caller aborts, before or during it, with the caller\'s reason', async () => {
    const r = registry();
    const seen: AbortSignal[] = [];
    r.register(tool('waits', { execute: (_args, ctx) => { seen.push(ctx.signal); return new Promise(() => {}); } }), 'x');
    const before = new AbortController();
    before.abort('gone before');
    expect(await r.execute('waits', {}, { signal: before.signal })).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_CANCELLED' } });
    expect(seen[0]).toMatchObject({ aborted: true, reason: 'gone before' });

    const during = new AbortController();
    const call = r.execute('waits', {}, { signal: during.signal });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(seen[1].aborted).toBe(false);
    during.abort('gone during');
    expect(await call).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_CANCELLED' } });
    expect(seen[1]).toMatchObject({ aborted: true, reason: 'gone during' });
  });

  it('aborts a sub-call\'s signal when the call that made it times out', async () => {
    const r = registry();
    let inner: AbortSignal | undefined;
    r.register(tool('inner', { execute: (_args, ctx) => { inner = ctx.signal; return new Promise(() => {}); } }), 'x');
    r.register(tool('outer', { timeoutMs: 30, composedOf: ['inner'], execute: (_args, ctx) => ctx.registry.execute('inner', {}) }), 'x');
    expect(await r.execute('outer', {})).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_TIMEOUT' } });
    expect(inner?.aborted).toBe(true);
  });

  it('lets the caller\'s timeout override the tool\'s', async () => {
    const r = registry();
    r.register(tool('slow', { timeoutMs: 60_000, execute: () => new Promise(() => {}) }), 'x');
    const started = Date.now();
    const result = await r.execute('slow', {}, { timeoutMs: 30 });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_TIMEOUT' } });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('creates the per-call temp dir on use and removes it after the call', async () => {
    const r = registry();
    let dir = '';
    r.register(tool('tmp', { execute: async (_a, ctx: ToolContext) => { dir = ctx.tmpDir; return ok(existsSync(dir)); } }), 'x');
    expect(await r.execute('tmp', {})).toMatchObject({ ok: true, value: true });
    expect(dir).not.toBe('');
    expect(existsSync(dir)).toBe(false);
  });

  it('lets a composed tool call only the tools in its composedOf', async () => {
    const r = registry();
    r.register(tool('inner'), 'x');
    r.register(tool('secret'), 'x');
    r.register(
      tool('outer', {
        composedOf: ['inner'],
        execute: async (_args, ctx) => {
          const allowed = await ctx.registry.execute('inner', {});
          const refused = await ctx.registry.execute('secret', {});
          return ok({ allowed: allowed.ok, refused: refused.ok ? null : refused.error.code });
        },
      }),
      'x',
    );
    expect(await r.execute('outer', {})).toMatchObject({ ok: true, value: { allowed: true, refused: 'FORGE_TOOL_NOT_COMPOSED' } });
  });

  it(`refuses nesting deeper than ${MAX_COMPOSITION_DEPTH}`, async () => {
    const r = registry();
    // level0 → level1 → ... → level12: every call goes one level deeper, no tool repeats.
    for (let i = 0; i <= 12; i++) {
      r.register(
        tool(`level${i}`, {
          composedOf: [`level${i + 1}`],
          execute: async (_args, ctx) => {
            if (i === 12) return ok(ctx.depth);
            const inner = await ctx.registry.execute(`level${i + 1}`, {});
            return inner.ok ? inner : fail(inner.error.code, inner.error.message);
          },
        }),
        'x',
      );
    }
    expect(await r.execute('level2', {})).toMatchObject({ ok: true, value: MAX_COMPOSITION_DEPTH });
    const result = await r.execute('level0', {});
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_DEPTH' } });
    if (!result.ok) expect(result.error.message).toContain('level0 → level1 → level2');
  });

  it('refuses a cycle at run time, printing it', async () => {
    const r = registry();
    const calls: string[] = [];
    const forward = (name: string, next: string) =>
      tool(name, {
        composedOf: [next],
        execute: async (_args, ctx) => {
          calls.push(name);
          const inner = await ctx.registry.execute(next, {});
          return inner.ok ? inner : fail(inner.error.code, inner.error.message);
        },
      });
    r.register(forward('a', 'b'), 'x');
    r.register(forward('b', 'a'), 'x');
    const result = await r.execute('a', {});
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_CYCLE', message: 'tool "a" calls itself in a cycle: a → b → a' } });
    expect(calls).toEqual(['a', 'b']);
  });

  it('reports every call to listeners with its duration', async () => {
    const r = registry();
    r.register(tool('t'), 'x');
    const events: string[] = [];
    r.onCall((e) => events.push(`${e.name}:${e.result.ok}:${e.durationMs >= 0}`));
    await r.execute('t', {});
    await r.execute('missing', {});
    expect(events).toEqual(['t:true:true', 'missing:false:true']);
  });

  it('masks the secrets the runtime holds in every result, before the caller or a listener sees it', async () => {
    // As the runtime reads a model key: from then on it is known, whatever the variable is called.
    const key = secretFromEnv({ ODD_NAME: 'mk-registry-0123456789' }, 'ODD_NAME', 'FORGE_MODEL_KEY')!;
    const r = registry();
    r.register(tool('dump_env', { execute: async () => ok({ lines: [`ODD_NAME=${key}`], [key]: { nested: `x${key}x` }, count: 1 }) }), 'x');
    r.register(tool('leaky_error', { execute: async () => fail('FORGE_TOOL_FAILED', `bad key ${key}`, `rotate ${key}`, `stderr: ${key}`) }), 'x');
    r.register(tool('thrower', { execute: async () => { throw new Error(`cannot use ${key}`); } }), 'x');
    const heard: string[] = [];
    r.onCall((e) => heard.push(JSON.stringify(e.result)));

    const dumped = await r.execute('dump_env', {});
    expect(dumped).toMatchObject({ ok: true, value: { lines: ['ODD_NAME=[REDACTED]'], '[REDACTED]': { nested: 'x[REDACTED]x' }, count: 1 } });
    expect(await r.execute('leaky_error', {})).toMatchObject({ ok: false, error: { message: 'bad key [REDACTED]', hint: 'rotate [REDACTED]', details: 'stderr: [REDACTED]' } });
    const thrown = await r.execute('thrower', {});
    expect(thrown).toMatchObject({ ok: false, error: { message: 'tool "thrower" failed: cannot use [REDACTED]' } });
    expect(JSON.stringify(thrown)).not.toContain(key);
    expect(heard.join('\n')).not.toContain(key);
  });
});
