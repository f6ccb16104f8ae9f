/**
 * Argument validation with ajv. Validators compile lazily, once per schema, so
 * a runtime with hundreds of tools starts without compiling any of them.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { addFormats, Ajv } from '../vendor/ajv.ts';
import { didYouMean } from '../suggest.ts';
import { schemaRegExp, unprotectedPattern } from '../regexp-safety.ts';
import type { JSONSchema } from './model.ts';
import { CHECK_COST_BUDGET, checkCost } from './check-cost.ts';
import { ownValue } from '../own-value.ts';

/**
 * A pattern of an external schema only the backtracking engine runs, as ajv
 * sees it: it matches everything (not checked here). tools/local-schema.ts
 * leaves such patterns out of the copy it makes (and says where they were);
 * this catches the ones its walk does not reach but ajv does — a `$ref` into
 * any part of the schema (`#/x-anything`, `#/properties/a/default`), an
 * `$id`, a keyword of a vocabulary the walk does not know.
 */
const externalRegExp = Object.assign(
  (pattern: string, flags: string): RegExp => {
    if (!unprotectedPattern(pattern)) return schemaRegExp(pattern, flags);
    return { test: () => true, toString: () => `(not checked here) ${pattern}` } as unknown as RegExp;
  },
  { code: 'externalRegExp' },
);

/** Schemas from an MCP server, an OpenAPI document or forge_tool (markExternal): compiled with externalRegExp. */
const externalSchemas = new WeakSet<object>();

/** Marks `schema` (the object itself) as from outside: its validators never run a pattern only the backtracking engine runs. */
export function markExternal<T extends object>(schema: T): T {
  externalSchemas.add(schema);
  return schema;
}

export function isExternal(schema: object): boolean {
  return externalSchemas.has(schema);
}

export function createAjv(options: { useDefaults?: boolean; verbose?: boolean; optimize?: boolean; validateSchema?: boolean; external?: boolean } = {}): InstanceType<typeof Ajv> {
  const ajv = new Ajv({
    // Unoptimized code compiles about twice as fast; validators that are
    // compiled once per build or per process do not earn the difference back.
    code: { optimize: options.optimize ?? false, regExp: options.external ? externalRegExp : schemaRegExp },
    verbose: options.verbose ?? false,
    allErrors: true,
    strict: false,
    useDefaults: options.useDefaults ?? false,
    coerceTypes: false,
    // `required` means sent: an argument named constructor or __proto__ is not found on Object.prototype.
    ownProperties: true,
    validateSchema: options.validateSchema ?? true,
    // A schema that does not compile is reported by its caller; ajv's own logger would print the whole
    // generated function (megabytes, for a schema someone else wrote) to the agent's log.
    logger: false,
  });
  addFormats(ajv);
  linearUrlFormat(ajv);
  linearUniqueItems(ajv);
  return ajv;
}

/**
 * ajv's `uniqueItems` compares every pair of items (deep equality) unless the
 * schema pins the items to scalar types: a schema someone else wrote (a
 * forged tool's, an MCP server's) saying only `uniqueItems: true` let one
 * call of 100,000 distinct items hold the server's one thread for minutes.
 * The same check in linear time: each item is written out once, its object
 * keys sorted (JSON Schema's equality, as ajv's: {a, b} equals {b, a}, -0 equals 0),
 * and looked up among those before it.
 */
function linearUniqueItems(ajv: InstanceType<typeof Ajv>): void {
  ajv.removeKeyword('uniqueItems');
  const validate: ((unique: boolean, items: unknown[]) => boolean) & { errors?: Partial<ErrorObject>[] } = (unique, items) => {
    if (!unique) return true;
    const seen = new Map<string, number>();
    for (let i = 0; i < items.length; i++) {
      const key = canonicalJson(items[i]);
      const j = seen.get(key);
      if (j !== undefined) {
        // ajv's own error, as its built-in keyword words it.
        validate.errors = [{ keyword: 'uniqueItems', message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`, params: { i, j } }];
        return false;
      }
      seen.set(key, i);
    }
    return true;
  };
  ajv.addKeyword({ keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', errors: true, validate });
}

/** A JSON value as text with every object's keys in order: two values JSON Schema calls equal have the same text. */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const object = value as Record<string, unknown>;
  return `{${Object.keys(object)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key])}`)
    .join(',')}}`;
}

/**
 * ajv-formats' `url` is one regexp with lookaheads and the u flag, which
 * only the backtracking engine runs, and its userinfo `(?:\S+(?::\S*)?@)?`
 * tries every split of what follows "://": "http://" and 200,000 colons
 * took a minute on the server's one thread (an argument a caller sends, or
 * a result an MCP server sends against its own outputSchema). The same
 * check, made in linear time: no whitespace after "://" (the userinfo, the
 * host and the path take none), then the host and port (the regexp's own
 * part for them) either right after "://" or after the last "@" of a piece
 * between two "/" (a host holds neither): those pieces do not overlap, so
 * each character is looked at a bounded number of times.
 */
function linearUrlFormat(ajv: InstanceType<typeof Ajv>): void {
  const own = ajv.formats.url;
  if (!(own instanceof RegExp)) return;
  const USERINFO = '(?:\\S+(?::\\S*)?@)?';
  const PATH = '(?:\\/[^\\s]*)?$';
  const SCHEME = '^(?:https?|ftp):\\/\\/';
  const source = own.source;
  const userinfoAt = source.indexOf(USERINFO);
  if (!source.startsWith(SCHEME) || userinfoAt !== SCHEME.length || !source.endsWith(PATH)) return;
  const scheme = new RegExp(SCHEME, own.flags);
  const hostAndPort = new RegExp(`^${source.slice(userinfoAt + USERINFO.length, source.length - PATH.length)}$`, own.flags);
  ajv.addFormat('url', (value: string) => {
    const found = scheme.exec(value);
    if (!found) return false;
    const rest = value.slice(found[0].length);
    if (/\s/.test(rest)) return false;
    // The host piece after "://", or after the last "@" of a piece between two "/" (the userinfo before it
    // at least one character): what follows it up to the next "/" holds no "@".
    let offset = 0;
    for (const piece of rest.split('/')) {
      const at = piece.lastIndexOf('@');
      if (offset === 0 && hostAndPort.test(piece)) return true;
      if (at >= 0 && offset + at >= 1 && hostAndPort.test(piece.slice(at + 1))) return true;
      offset += piece.length + 1;
    }
    return false;
  });
}

/** By [defaults filled in, external]: an external schema's `$id` is never looked up by one of Forge's own, nor the other way round. */
interface Compiler {
  ajv?: InstanceType<typeof Ajv>;
  readonly cache: WeakMap<object, ValidateFunction>;
}
const compilers: Compiler[] = [0, 1, 2, 3].map(() => ({ cache: new WeakMap() }));

function compileWith(schema: JSONSchema, useDefaults: boolean): ValidateFunction {
  const external = externalSchemas.has(schema);
  const compiler = compilers[(useDefaults ? 2 : 0) + (external ? 1 : 0)]!;
  let validate = compiler.cache.get(schema);
  if (!validate) {
    compiler.ajv ??= createAjv({ useDefaults, validateSchema: false, external });
    validate = compiler.ajv.compile(withoutDialect(schema));
    if (external) validate = withCheckCost(schema, validate);
    compiler.cache.set(schema, validate);
  }
  return validate;
}

/**
 * A validator of a schema from outside that counts what a value would cost
 * it first (check-cost.ts) and refuses, as a failed check, one that would
 * hold the server's one thread past the budget.
 */
function withCheckCost(schema: JSONSchema, validate: ValidateFunction): ValidateFunction {
  const checked = ((data: unknown) => {
    if (checkCost(schema, data) === undefined) {
      checked.errors = [TOO_COSTLY];
      return false;
    }
    const valid = validate(data);
    checked.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return Object.assign(checked, { schema: validate.schema, schemaEnv: validate.schemaEnv });
}

/** The keyword of the error a value too costly to check fails with, for callers that word errors themselves. */
export const TOO_COSTLY_KEYWORD = 'checkCost';

const TOO_COSTLY: ErrorObject = {
  keyword: TOO_COSTLY_KEYWORD,
  instancePath: '',
  schemaPath: '#',
  params: { budget: CHECK_COST_BUDGET },
  // Without Intl: number formatting loads ICU data on first use, and this is made as the module loads, at every start (25 ms).
  message: `the value would take too long to check against this schema: its alternatives (anyOf, oneOf, $ref) apply to each part of the value, past ${String(CHECK_COST_BUDGET).replace(/\B(?=(\d{3})+$)/g, ',')} checks in all; send fewer items, or use a schema with fewer alternatives`,
};

/** Newer schemas name a draft that this validator treats the same way; drop the marker rather than fail. */
function withoutDialect(schema: JSONSchema): JSONSchema {
  if (!('$schema' in schema)) return schema;
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

/**
 * The validator of a tool's arguments (or output). Not checked against the
 * meta-schema again: every schema that reaches a registry was checked where
 * it entered — external ones (MCP, OpenAPI, forged tools) by schemaProblem
 * below, Forge's own (docstrings, YAML parameters, builtins) by their
 * grammar's and the catalog's tests — and compiling the meta-schema is most
 * of a process's first call (~20 ms of ~25).
 */
export function compileSchema(schema: JSONSchema): ValidateFunction {
  return compileWith(schema, true);
}

/** The validator of a result: as compileSchema, without filling in defaults (which must not change a result). */
export function compileResultSchema(schema: JSONSchema): ValidateFunction {
  return compileWith(schema, false);
}

/**
 * The patterns ajv compiles for `schema` that only the backtracking engine
 * runs, however it reaches them (a `$ref` to anywhere in the schema, an
 * `$id`): what forge_tool refuses. Compiles the schema with an instance of
 * its own (a few milliseconds: forging is rare).
 */
export function backtrackingPatternsCompiled(schema: JSONSchema): string[] {
  const found: string[] = [];
  const recording = Object.assign(
    (pattern: string, flags: string): RegExp => {
      if (unprotectedPattern(pattern) && !found.includes(pattern)) found.push(pattern);
      return externalRegExp(pattern, flags);
    },
    { code: 'recordingRegExp' },
  );
  const ajv = new Ajv({ code: { optimize: false, regExp: recording }, strict: false, allErrors: true, validateSchema: false, logger: false });
  addFormats(ajv);
  try {
    ajv.compile(withoutDialect(schema));
  } catch {
    // A schema that does not compile is schemaProblem's to report.
  }
  return found;
}

let checkingAjv: InstanceType<typeof Ajv> | undefined;
const checked = new Map<string, string | undefined>();

/**
 * Checks a schema against the JSON Schema meta-schema, then compiles it;
 * returns what is wrong, if anything (the build's schema check). Identical
 * schemas are checked once.
 */
export function schemaProblem(schema: JSONSchema): string | undefined {
  const key = JSON.stringify(schema);
  if (checked.has(key)) return checked.get(key);
  let problem: string | undefined;
  try {
    checkingAjv ??= createAjv();
    const target = withoutDialect(schema);
    if (!checkingAjv.validateSchema(target)) problem = checkingAjv.errorsText(checkingAjv.errors, { dataVar: 'schema' });
    else checkingAjv.compile(target);
  } catch (err) {
    problem = (err as Error).message;
  }
  checked.set(key, problem);
  return problem;
}

/**
 * "argument "days" must be integer" — names the field the way a person would.
 * With the schema, an unknown argument names the declared one it is closest
 * to, which a model (or a person) then passes instead.
 */
export function describeArgumentError(e: ErrorObject, schema?: JSONSchema, args?: unknown): string {
  const field = e.instancePath
    ? e.instancePath.slice(1).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~')).join('.')
    : '';
  switch (e.keyword) {
    case TOO_COSTLY.keyword:
      return e.message!;
    case 'required':
      return `missing required argument "${joinField(field, (e.params as { missingProperty: string }).missingProperty)}"`;
    case 'additionalProperties': {
      const name = (e.params as { additionalProperty: string }).additionalProperty;
      // Not one the call already passes: renaming to it would give that argument twice.
      const passed = new Set(Object.keys(objectAt(args, e.instancePath, (at, part) => at[part])));
      const declared = Object.keys(objectAt(schema, e.instancePath, (at, part) => (at.properties as Record<string, unknown> | undefined)?.[part], 'properties'));
      const meant = schema && didYouMean(name, declared.filter((p) => !passed.has(p)));
      return `unknown argument "${joinField(field, name)}"${meant ? ` (${meant})` : ''}`;
    }
    case 'enum': {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
      // The value passed, and the member it is closest to (not for a word of one or two letters: any is close).
      const got = args === undefined ? undefined : valueAt(args, e.instancePath);
      const meant = typeof got === 'string' && got.length >= 3 ? didYouMean(got, allowed.filter((v): v is string => typeof v === 'string')) : undefined;
      const passed = args === undefined ? '' : ` (got ${got === undefined ? 'nothing' : truncate(JSON.stringify(got))}${meant ? `; ${meant}` : ''})`;
      return `argument "${field}" must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}${passed}`;
    }
    case 'type': {
      // "must be an integer (got "two")": the words the config's errors use, and what was passed.
      const got = args === undefined ? undefined : valueAt(args, e.instancePath);
      const passed = args === undefined || got === undefined ? '' : ` (got ${truncate(JSON.stringify(got))})`;
      return `argument "${field || '(root)'}" must be ${typeWords((e.params as { type: string | string[] }).type)}${passed}`;
    }
    default:
      return field ? `argument "${field}" ${e.message}` : `arguments ${e.message}`;
  }
}

type Step = (at: Record<string, unknown>, part: string) => unknown;

/**
 * The object at `instancePath` (/a/b) below `root`, stepping with `step` (into arguments, or into a schema's
 * `properties`), then its `field` if given; {} where there is none.
 */
function objectAt(root: unknown, instancePath: string, step: Step, field?: string): Record<string, unknown> {
  let at = valueAt(root, instancePath, step);
  if (field !== undefined) at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[field] : undefined;
  return at !== null && typeof at === 'object' && !Array.isArray(at) ? (at as Record<string, unknown>) : {};
}

/** The value at `instancePath` (/a/0/b) in `root`, stepping with `step` (into arguments unless told). */
function valueAt(root: unknown, instancePath: string, step: Step = (at, part) => at[part]): unknown {
  let at = root;
  for (const part of instancePath.split('/').slice(1)) {
    at = at !== null && typeof at === 'object' ? step(at as Record<string, unknown>, part.replace(/~1/g, '/').replace(/~0/g, '~')) : undefined;
  }
  return at;
}

const TYPE_WORDS: Record<string, string> = { string: 'a string', integer: 'an integer', number: 'a number', boolean: 'a boolean', object: 'an object', array: 'an array', null: 'null' };

/** A JSON Schema type ("integer", or "string,null" / ["string", "null"]) as words: "an integer", "a string or null". */
export function typeWords(type: string | string[]): string {
  return (Array.isArray(type) ? type : String(type).split(',')).map((t) => ownValue(TYPE_WORDS, t) ?? t).join(' or ');
}

function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function joinField(parent: string, child: string): string {
  return parent ? `${parent}.${child}` : child;
}

export interface ArgumentCheck {
  ok: boolean;
  /** The arguments with schema defaults filled in (a copy; the caller's object is untouched). */
  args: unknown;
  errors: string[];
}

export function checkArguments(schema: JSONSchema, args: unknown): ArgumentCheck {
  const validate = compileSchema(schema);
  const copy = args === undefined ? {} : structuredClone(args);
  // Checked without prototypes: an argument named constructor (or __proto__) left out is missing and
  // gets its default, as any other does, instead of being Object.prototype's member; at any depth.
  // Only for a schema that names such a member: ajv compares objects (uniqueItems, enum, const) by
  // their constructor and valueOf, which an object without a prototype has not.
  const plain = namesPrototypeMember(schema) ? plainObjectsIn(copy) : [];
  for (const object of plain) Object.setPrototypeOf(object, null);
  const valid = validate(copy);
  for (const object of plain) Object.setPrototypeOf(object, Object.prototype);
  if (valid) return { ok: true, args: copy, errors: [] };
  const errors = (validate.errors ?? []).map((e) => describeArgumentError(e, schema, copy));
  return { ok: false, args: copy, errors: [...new Set(errors)] };
}

function isPlainObject(value: unknown): value is object {
  return value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype;
}

/** Per schema: whether a name in it (a property's, a required one's) is a member of Object.prototype. */
const namingPrototypeMember = new WeakMap<object, boolean>();

function namesPrototypeMember(schema: JSONSchema): boolean {
  let names = namingPrototypeMember.get(schema);
  if (names === undefined) {
    names = false;
    const pending: unknown[] = [schema];
    while (pending.length && !names) {
      const item = pending.pop();
      if (typeof item === 'string') names = item in Object.prototype;
      else if (item !== null && typeof item === 'object') {
        if (!Array.isArray(item) && Object.keys(item).some((key) => key in Object.prototype)) names = true;
        pending.push(...Object.values(item));
      }
    }
    namingPrototypeMember.set(schema, names);
  }
  return names;
}

/** Every plain object in `value` (a structured clone: plain objects and arrays), found without recursion. */
function plainObjectsIn(value: unknown): object[] {
  const found: object[] = [];
  const pending = [value];
  while (pending.length) {
    const item = pending.pop();
    if (item === null || typeof item !== 'object') continue;
    if (isPlainObject(item)) found.push(item);
    if (isPlainObject(item) || Array.isArray(item)) for (const child of Object.values(item)) pending.push(child);
  }
  return found;
}

/**
 * Whether `value` (parsed JSON) nests objects and arrays more than `max` deep, looked at without recursion:
 * arguments nested thousands deep (as a client over stdio may send, with no request size limit before)
 * overflow a recursive walk's stack.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length) {
    const [item, depth] = pending.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}
