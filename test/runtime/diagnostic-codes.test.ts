import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIAGNOSTIC_CODES } from '../../runtime/diagnostic-codes.ts';
import { ForgeError } from '../../runtime/diagnostics.ts';
import { HttpClient } from '../../runtime/net/http-client.ts';
import { createEgressPolicy } from '../../runtime/guard/egress.ts';
import { ToolRegistry } from '../../runtime/tools/registry.ts';
import { withErrorTable } from '../../scripts/write-error-table.ts';
import { repoRoot, tempDir } from '../helpers/project.ts';
import { ScheduleExpressionError } from '../../runtime/scheduler/schedule-expression.ts';
import { ValueRefused } from '../../runtime/tools/yaml/escape.ts';
import { GrepPatternError } from '../../runtime/tools/code-agent/grep/grep-query.ts';
import { PythonNotFoundError } from '../../runtime/tools/custom/python-interpreter.ts';
import { StateConflictError } from '../../runtime/state/store.ts';
import { NoModelError } from '../../runtime/agent/agent.ts';
import { BodyTimeoutError, BodyTooLargeError } from '../../runtime/server/request-body.ts';
import { JsonTooDeepError } from '../../runtime/server/http-limits.ts';

describe('the catalog of diagnostic codes', () => {
  it('is what README.md lists (run `npm run docs:errors` after changing it)', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    expect(withErrorTable(readme)).toBe(readme);
  });

  it('gives every code a meaning, and names only FORGE_ codes', () => {
    for (const [code, info] of Object.entries(DIAGNOSTIC_CODES)) {
      expect(code).toMatch(/^FORGE_[A-Z0-9_]+$/);
      expect(info.meaning.length, code).toBeGreaterThan(8);
    }
  });
});

describe('ForgeError', () => {
  it('keeps its code and hint through the registry instead of becoming FORGE_TOOL_FAILED', async () => {
    const registry = new ToolRegistry({ workDir: tempDir() });
    const http = new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: ['example.org'] }));
    const base = { description: 'x', category: 'custom' as const, tags: ['read'], inputSchema: { type: 'object' } };
    registry.register({ ...base, name: 'thrower', execute: async () => { throw new ForgeError('FORGE_FILE_NOT_FOUND', 'nothing at notes.md', 'list the folder first'); } }, 'thrower');
    registry.register({ ...base, name: 'fetcher', execute: async () => { await http.request({ url: 'https://elsewhere.example.net/' }); return { ok: true, value: 1 }; } }, 'fetcher');
    registry.register({ ...base, name: 'plain', execute: async () => { throw new Error('boom'); } }, 'plain');
    expect(await registry.execute('thrower', {})).toMatchObject({ ok: false, error: { code: 'FORGE_FILE_NOT_FOUND', message: 'nothing at notes.md', hint: 'list the folder first' } });
    expect(await registry.execute('fetcher', {})).toMatchObject({ ok: false, error: { code: 'FORGE_EGRESS_REFUSED' } });
    expect(await registry.execute('plain', {})).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_FAILED' } });
  });

  it.each([
    ['ScheduleExpressionError', () => new ScheduleExpressionError('"61 * * * *" is not a schedule', 'five fields'), 'FORGE_SCHEDULE_CRON'],
    ['ValueRefused', () => new ValueRefused('holds a NUL byte'), 'FORGE_YAML_VALUE'],
    ['GrepPatternError', () => new GrepPatternError('unterminated group'), 'FORGE_GREP_PATTERN'],
    ['PythonNotFoundError', () => new PythonNotFoundError('no python3 on PATH'), 'FORGE_PYTHON_MISSING'],
    ['StateConflictError', () => new StateConflictError('the task changed meanwhile'), 'FORGE_STATE_CONFLICT'],
    ['NoModelError', () => new NoModelError(), 'FORGE_NO_MODEL'],
    ['BodyTooLargeError', () => new BodyTooLargeError(10), 'FORGE_BODY_TOO_LARGE'],
    ['BodyTimeoutError', () => new BodyTimeoutError('idle', 5), 'FORGE_BODY_TIMEOUT'],
    ['JsonTooDeepError', () => new JsonTooDeepError(64), 'FORGE_JSON_TOO_DEEP'],
  ] as const)('%s thrown out of a tool keeps its code through the registry', async (_name, make, code) => {
    const registry = new ToolRegistry({ workDir: tempDir() });
    const thrown = make();
    registry.register({ description: 'x', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, name: 'thrower', execute: async () => { throw thrown; } }, 'thrower');
    expect(thrown).toBeInstanceOf(ForgeError);
    expect(await registry.execute('thrower', {})).toMatchObject({ ok: false, error: { code, message: thrown.message, ...(thrown.hint ? { hint: thrown.hint } : {}) } });
  });
});
