/** How deep composed tools may nest: a call at depth 11 (twelve tools deep) is refused, at run time and at build time. */
export const MAX_COMPOSITION_DEPTH = 10;
