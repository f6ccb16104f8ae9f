#!/usr/bin/env node
// The `forge` command: runs the compiled CLI in dist/ (built by `npm install`).
import module from 'node:module';

// Node 22.1+ keeps V8's compiled code for dist/ between runs (in the OS temp dir, checked
// against each file's contents): every later command skips most of its compile time.
// NODE_DISABLE_COMPILE_CACHE=1 turns it off; Node 20 has no such cache.
module.enableCompileCache?.();

import('../dist/forge.js').catch((err) => {
  if (err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/forge.js')) {
    process.stderr.write('forge is not compiled yet: run `npm install` (or `npm run prepare`) in the forge directory\n');
    process.exit(1);
  }
  throw err;
});
