#!/usr/bin/env node
// The `forge` command: runs the compiled CLI in dist/ (built by `npm install`).
import('../dist/forge.js').catch((err) => {
  if (err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/forge.js')) {
    process.stderr.write('forge is not compiled yet: run `npm install` (or `npm run prepare`) in the forge directory\n');
    process.exit(1);
  }
  throw err;
});
