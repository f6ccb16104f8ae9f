/**
 * Type-level checks that builtin arguments (and configs) are typed from their
 * schemas. Nothing here runs: tsc checks it (`npx tsc --noEmit`, and
 * typed-args.test.ts compiles this file on its own), and every
 * `@ts-expect-error` must meet the error it expects, so a type mapper that
 * fell back to any or unknown fails the check.
 */
import { expectTypeOf } from 'vitest';
import { defineBuiltin, type BuiltinDefinition } from '../../../../runtime/tools/builtin/define.ts';
import { ok } from '../../../../runtime/tools/model.ts';
import type { ForgeRequest } from '../../../../runtime/tools/emergent/forge-request.ts';

import csvParse from '../../../../runtime/tools/builtin/csv-parse.ts';
import cliExecute from '../../../../runtime/tools/builtin/cli-execute.ts';
import datetimeNow from '../../../../runtime/tools/builtin/datetime-now.ts';
import fileCreate from '../../../../runtime/tools/builtin/file-create.ts';
import httpRequest from '../../../../runtime/tools/builtin/http-request.ts';
import jsonParse from '../../../../runtime/tools/builtin/json-parse.ts';
import mathCalculate from '../../../../runtime/tools/builtin/math-calculate.ts';
import memoryGet from '../../../../runtime/tools/builtin/memory-get.ts';
import memorySearch from '../../../../runtime/tools/builtin/memory-search.ts';
import readSkill from '../../../../runtime/tools/builtin/read-skill.ts';
import scheduleDelete from '../../../../runtime/tools/builtin/schedule-delete.ts';
import scheduleHistory from '../../../../runtime/tools/builtin/schedule-history.ts';
import scheduleList from '../../../../runtime/tools/builtin/schedule-list.ts';
import scheduleSet from '../../../../runtime/tools/builtin/schedule-set.ts';
import uuidGenerate from '../../../../runtime/tools/builtin/uuid-generate.ts';
import webFetch from '../../../../runtime/tools/builtin/web-fetch.ts';
import webSearch from '../../../../runtime/tools/builtin/web-search.ts';
import webhookCall from '../../../../runtime/tools/builtin/webhook-call.ts';
import atomicEdit from '../../../../runtime/tools/code-agent/atomic-edit.ts';
import directoryTree from '../../../../runtime/tools/code-agent/directory-tree.ts';
import fileEdit from '../../../../runtime/tools/code-agent/file-edit.ts';
import filePatch from '../../../../runtime/tools/code-agent/file-patch.ts';
import fileRead from '../../../../runtime/tools/code-agent/file-read.ts';
import fileWrite from '../../../../runtime/tools/code-agent/file-write.ts';
import globSearch from '../../../../runtime/tools/code-agent/glob-search.ts';
import grepSearch from '../../../../runtime/tools/code-agent/grep-search.ts';
import debugConsole from '../../../../runtime/tools/dev/debug-console.ts';
import localFileBrowser from '../../../../runtime/tools/dev/local-file-browser.ts';
import localShell from '../../../../runtime/tools/dev/local-shell.ts';
import testRunner from '../../../../runtime/tools/dev/test-runner.ts';
import forgeTool from '../../../../runtime/tools/emergent/forge-tool.ts';

type ArgsOf<D> = D extends BuiltinDefinition<any, infer Args> ? Args : never;
type ConfigOf<D> = D extends BuiltinDefinition<infer Config, any> ? Config : never;

// (a) The arguments are the schema's: csv_parse's, property by property.
expectTypeOf<ArgsOf<typeof csvParse>>().toEqualTypeOf<{
  text: string;
  delimiter: string;
  header: boolean;
  quote: string;
  trim: boolean;
  skip_empty_lines: boolean;
  relax_column_count: boolean;
  max_records: number;
}>();
// An enum is its literals, not string.
expectTypeOf<ArgsOf<typeof datetimeNow>['format']>().toEqualTypeOf<'rfc3339' | 'rfc2822' | 'unix' | 'unix_ms' | 'date' | 'time' | 'custom'>();
expectTypeOf<ArgsOf<typeof uuidGenerate>['version']>().toEqualTypeOf<4 | 7>();

// (c) A property with a default is present after validation; one without stays optional.
expectTypeOf<Pick<ArgsOf<typeof cliExecute>, 'args' | 'stdin'>>().toEqualTypeOf<{ args: string[]; stdin?: string }>();
expectTypeOf<Pick<ArgsOf<typeof jsonParse>, 'indent' | 'query'>>().toEqualTypeOf<{ indent: number; query?: string }>();

// The config is typed from configSchema the same way (defaults filled in by instantiateBuiltin).
expectTypeOf<ConfigOf<typeof cliExecute>>().toEqualTypeOf<{ allowed_binaries: string[]; env_passthrough: string[]; timeout: number; max_output_bytes: number }>();
expectTypeOf<ConfigOf<typeof fileRead>>().toEqualTypeOf<{ allow_hardlinks: boolean }>();

// forge_tool's request: the oneOf is a union told apart by `mode`.
expectTypeOf<ForgeRequest['implementation']['mode']>().toEqualTypeOf<'compose' | 'sandbox'>();
expectTypeOf<ForgeRequest['scope']>().toEqualTypeOf<'session' | 'agent'>();

// webhook_call takes one of two schemas (specFor swaps in the pinned names), so its execute takes either.
const callWebhook = webhookCall.create({} as never).execute;
expectTypeOf(callWebhook).parameter(0).toEqualTypeOf<ArgsOf<typeof webhookCall>>();

/** Every shipped tool: none of them may fall back to any, unknown, never or an open object. */
const SHIPPED = {
  csvParse, cliExecute, datetimeNow, fileCreate, httpRequest, jsonParse, mathCalculate, memoryGet, memorySearch, readSkill,
  scheduleDelete, scheduleHistory, scheduleList, scheduleSet, uuidGenerate, webFetch, webSearch, webhookCall,
  atomicEdit, directoryTree, fileEdit, filePatch, fileRead, fileWrite, globSearch, grepSearch,
  debugConsole, localFileBrowser, localShell, testRunner, forgeTool,
};
type Loose<T> = 0 extends 1 & T ? 'any' : [T] extends [never] ? 'never' : unknown extends T ? 'unknown' : string extends keyof T ? 'open object' : false;
type LooselyTyped = { [Name in keyof typeof SHIPPED as Loose<ArgsOf<(typeof SHIPPED)[Name]>> extends false ? never : Name]: Loose<ArgsOf<(typeof SHIPPED)[Name]>> };
expectTypeOf<LooselyTyped>().toEqualTypeOf<{}>();
expectTypeOf<keyof typeof SHIPPED>().toEqualTypeOf<
  | 'csvParse' | 'cliExecute' | 'datetimeNow' | 'fileCreate' | 'httpRequest' | 'jsonParse' | 'mathCalculate' | 'memoryGet' | 'memorySearch' | 'readSkill'
  | 'scheduleDelete' | 'scheduleHistory' | 'scheduleList' | 'scheduleSet' | 'uuidGenerate' | 'webFetch' | 'webSearch' | 'webhookCall'
  | 'atomicEdit' | 'directoryTree' | 'fileEdit' | 'filePatch' | 'fileRead' | 'fileWrite' | 'globSearch' | 'grepSearch'
  | 'debugConsole' | 'localFileBrowser' | 'localShell' | 'testRunner' | 'forgeTool'
>();

// A tool written here: inside execute, the arguments are typed with no cast.
export const sample = defineBuiltin({
  spec: {
    name: 'sample',
    description: 'A tool for the type checks.',
    category: 'builtin',
    tags: ['read'],
    inputSchema: {
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: {
        name: { type: 'string' },
        count: { type: 'integer', default: 1 },
        note: { type: 'string' },
      },
    },
  },
  configSchema: { type: 'object', additionalProperties: false, properties: { prefix: { type: 'string', default: '>' } } },
  create: (host) => ({
    async execute(args) {
      expectTypeOf(args).toEqualTypeOf<{ name: string; count: number; note?: string }>();
      expectTypeOf(host.config.prefix).toBeString();
      // (c) count has a default: a number, used with no `!` and no fallback.
      const doubled: number = args.count * 2;
      // @ts-expect-error -- note has no default, so it may be missing.
      const length: number = args.note.length;
      // (b) A property the schema lacks is an error.
      // @ts-expect-error -- "colour" is not in the schema.
      const colour: unknown = args.colour;
      // A schema change the code does not follow fails: name is a string, not a number.
      // @ts-expect-error -- name is typed string by the schema.
      const asNumber: number = args.name;
      return ok({ doubled, length, colour, asNumber });
    },
  }),
});
