/**
 * A JSON Schema validator for a file Forge reads (forge.yaml, YAML tools):
 * the one precompiled at install time by scripts/generate-validators.mjs,
 * unless the schema changed since — then it is compiled here, with the same
 * options (verbose errors carry the failing schema, which holds the hints).
 */
import { createHash } from 'node:crypto';
import type { ErrorObject } from 'ajv';

export type SchemaValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

export interface Precompiled {
  schemaHash: string;
  validate: SchemaValidator;
}

/** A memoized getter for the schema's validator. */
export function schemaValidator(schemaWithId: Record<string, unknown>, precompiled: Precompiled): () => Promise<SchemaValidator> {
  let validator: SchemaValidator | undefined;
  return async () => {
    if (validator) return validator;
    const { $id: _id, ...schema } = schemaWithId;
    if (precompiled.schemaHash === createHash('sha256').update(JSON.stringify(schema)).digest('hex')) {
      validator = precompiled.validate;
    } else {
      const { createAjv } = await import('../../runtime/tools/validation.ts');
      const ajv = createAjv({ verbose: true });
      ajv.addKeyword({ keyword: 'x-hint' });
      validator = ajv.compile(schema);
    }
    return validator;
  };
}
