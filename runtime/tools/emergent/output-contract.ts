/**
 * A forged tool's outputSchema is a contract: checked on every test case,
 * and on every call afterwards (a result that breaks it is an error result,
 * whichever front end asked).
 */
import type { JSONSchema } from '../model.ts';
import { createAjv, describeArgumentError } from '../validation.ts';

/** Its own validator: the arguments' one fills in defaults, which must not change a result. */
let outputAjv: ReturnType<typeof createAjv> | undefined;
const compiled = new WeakMap<object, ReturnType<ReturnType<typeof createAjv>['compile']>>();

export function outputProblem(schema: JSONSchema, value: unknown): string | undefined {
  let validate = compiled.get(schema);
  if (!validate) {
    const { $schema: _dialect, ...rest } = schema;
    validate = (outputAjv ??= createAjv()).compile(rest);
    compiled.set(schema, validate);
  }
  if (validate(value)) return undefined;
  return `the output does not match outputSchema: ${(validate.errors ?? []).map((e) => describeArgumentError(e)).join('; ')}`;
}
