/**
 * ajv and its formats, behind one module: prebuilt once per Forge version
 * (scripts/build-vendor.mjs) and copied into a bundle's vendor/, so esbuild does
 * not parse ajv's hundred files on every build (see mcp.ts).
 *
 * Import ajv's values from here, never from the packages (types are fine).
 */
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv and ajv-formats are CommonJS; under ESM their class is on `.default`
// in some loaders and is the module itself in others.
export const Ajv = ((AjvModule as unknown as { default?: unknown }).default ?? AjvModule) as typeof AjvModule.default;
export const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as typeof addFormatsModule.default;
