/**
 * The small libraries the runtime uses, behind one module: prebuilt once
 * per Forge version and copied into a bundle's vendor/ (see mcp.ts).
 *
 * Import their values from here, never from the packages (types are fine).
 */
export { Cron } from 'croner';
export { createParser } from 'eventsource-parser';
export { distance } from 'fastest-levenshtein';
export { default as ipaddr } from 'ipaddr.js';
export { default as picomatch } from 'picomatch';
