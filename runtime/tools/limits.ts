/** How deep composed tools may nest: a call at depth 11 (twelve tools deep) is refused, at run time and at build time. */
export const MAX_COMPOSITION_DEPTH = 10;

/** How deep arguments may nest, said when they overflow the validator's stack (HTTP refuses a body past the same depth first). */
export const MAX_ARGUMENT_DEPTH = 64;

/**
 * How many calls may wait for a custom tool's worker while it runs another (it runs one at a
 * time); the next is refused at once with FORGE_TOOL_BUSY. Room for one model answer's
 * parallel calls to one tool and a few callers more; FORGE_TOOL_QUEUE changes it.
 */
export const DEFAULT_TOOL_QUEUE = 32;
