/** How deep composed tools may nest: a call at depth 11 (twelve tools deep) is refused, at run time and at build time. */
export const MAX_COMPOSITION_DEPTH = 10;

/** How deep arguments may nest, said when they overflow the validator's stack (HTTP refuses a body past the same depth first). */
export const MAX_ARGUMENT_DEPTH = 64;
