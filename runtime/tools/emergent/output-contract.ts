/**
 * A forged tool's outputSchema is a contract: checked on every test case,
 * and on every call afterwards (a result that breaks it is an error result,
 * whichever front end asked).
 */
import type { JSONSchema } from '../model.ts';
import { compileResultSchema, describeArgumentError, markExternal } from '../validation.ts';

export function outputProblem(schema: JSONSchema, value: unknown): string | undefined {
  // The model's schema: a pattern only the backtracking engine runs is never run (forge_tool refuses one anyway).
  const validate = compileResultSchema(markExternal(schema));
  if (validate(value)) return undefined;
  return `the output does not match outputSchema: ${(validate.errors ?? []).map((e) => describeArgumentError(e)).join('; ')}`;
}
