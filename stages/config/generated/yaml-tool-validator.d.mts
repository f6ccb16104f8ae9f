// Types for the validator scripts/generate-validators.mjs writes next to this file.
import type { ErrorObject } from 'ajv';

export declare const schemaHash: string;
export declare const validate: ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
export default validate;
