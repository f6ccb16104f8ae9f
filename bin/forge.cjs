#!/usr/bin/env node
'use strict';
// The `forge` command: runs the compiled CLI in dist/ (built by `npm install`).
// CommonJS on purpose: a cached build and --version are answered by
// dist/forge-fast.cjs, one file, before any ES module is loaded.

// Node 22.1+ keeps V8's compiled code for dist/ between runs (in the OS temp dir, checked
// against each file's contents): every later command skips most of its compile time.
// NODE_DISABLE_COMPILE_CACHE=1 turns it off; Node 20 has no such cache.
require('node:module').enableCompileCache?.();

let fast;
try {
  fast = require('../dist/forge-fast.cjs');
} catch (err) {
  if (err?.code !== 'MODULE_NOT_FOUND') throw err;
}
const code = fast?.answer(process.argv.slice(2));
if (code !== undefined) process.exitCode = code;
else
  import('../dist/forge.js').catch((err) => {
    if (err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/forge.js')) {
      process.stderr.write('forge is not compiled yet: run `npm install` (or `npm run prepare`) in the forge directory\n');
      process.exit(1);
    }
    throw err;
  });
