/**
 * Argument validation with ajv. Validators compile lazily, once per schema, so
 * a runtime with hundreds of tools starts without compiling any of them.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { addFormats, Ajv } from '../vendor/ajv.ts';
import { didYouMean } from '../suggest.ts';
import type { JSONSchema } from './model.ts';

export function createAjv(options: { useDefaults?: boolean; verbose?: boolean; optimize?: boolean; validateSchema?: boolean } = {}): InstanceType<typeof Ajv> {
  const ajv = new Ajv({
    // Unoptimized code compiles about twice as fast; validators that are
    // compiled once per build or per process do not earn the difference back.
    code: { optimize: options.optimize ?? false },
    verbose: options.verbose ?? false,
    allErrors: true,
    strict: false,
    useDefaults: options.useDefaults ?? false,
    coerceTypes: false,
    validateSchema: options.validateSchema ?? true,
  });
  addFormats(ajv);
  return ajv;
}

let sharedAjv: InstanceType<typeof Ajv> | undefined;
const compiled = new WeakMap<object, ValidateFunction>();

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
  let validate = compiled.get(schema);
  if (!validate) {
    sharedAjv ??= createAjv({ useDefaults: true, validateSchema: false });
    validate = sharedAjv.compile(withoutDialect(schema));
    compiled.set(schema, validate);
  }
  return validate;
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
export function describeArgumentError(e: ErrorObject, schema?: JSONSchema): string {
  const field = e.instancePath
    ? e.instancePath.slice(1).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~')).join('.')
    : '';
  switch (e.keyword) {
    case 'required':
      return `missing required argument "${joinField(field, (e.params as { missingProperty: string }).missingProperty)}"`;
    case 'additionalProperties': {
      const name = (e.params as { additionalProperty: string }).additionalProperty;
      const meant = schema && didYouMean(name, Object.keys(propertiesAt(schema, e.instancePath)));
      return `unknown argument "${joinField(field, name)}"${meant ? ` (${meant})` : ''}`;
    }
    case 'enum':
      return `argument "${field}" must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'type':
      return `argument "${field || '(root)'}" must be ${(e.params as { type: string }).type}`;
    default:
      return field ? `argument "${field}" ${e.message}` : `arguments ${e.message}`;
  }
}

/** The properties the schema declares for the object at `instancePath` (/a/b), through nested objects' `properties`. */
function propertiesAt(schema: JSONSchema, instancePath: string): Record<string, unknown> {
  let at: JSONSchema | undefined = schema;
  for (const part of instancePath.split('/').slice(1)) {
    at = (at?.properties as Record<string, JSONSchema> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return (at?.properties as Record<string, unknown> | undefined) ?? {};
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
  if (validate(copy)) return { ok: true, args: copy, errors: [] };
  const errors = (validate.errors ?? []).map((e) => describeArgumentError(e, schema));
  return { ok: false, args: copy, errors: [...new Set(errors)] };
}
