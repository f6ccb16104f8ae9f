/**
 * Where a bundle's start keeps V8 code caches, handed from runtime.mjs
 * (core-loader.ts, which decides it) to the prebuilt vendor modules' loader
 * inside the core (vendor-file.ts). It must be there before the core is
 * evaluated: the core's own modules may load a vendor module as they are
 * evaluated (an agent with MCP adapters loads the MCP SDK then). runtime.mjs
 * and the core are two bundles with a module each of their own, so the
 * hand-over is a global under a registered symbol.
 */
export interface VendorCodeCache {
  /** The bundle's cache folder (.code-cache/). */
  dir: string;
  /** Whether this process writes caches (a TS tool's worker only reads them). */
  writes: boolean;
}

const KEY = Symbol.for('forge.vendor-code-cache');

/** Set by the start before it evaluates the core; undefined: vendor modules compile from source. */
export function setVendorCodeCache(cache: VendorCodeCache | undefined): void {
  (globalThis as { [KEY]?: VendorCodeCache })[KEY] = cache;
}

export function vendorCodeCache(): VendorCodeCache | undefined {
  return (globalThis as { [KEY]?: VendorCodeCache })[KEY];
}
