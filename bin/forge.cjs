#!/usr/bin/env node
'use strict';
// The `forge` command: runs the compiled CLI in dist/ (built by `npm install`).
// A cached build and --version are answered by dist/forge-fast.cjs, one small
// file; anything else runs dist/forge-cli.cjs, the whole CLI in one CommonJS
// file, compiled with V8's code cache kept in Forge's cache (cli/code-cache.ts).

// Node 22.1+ also keeps V8's compiled code for what the CLI requires from packages
// (esbuild's API) between runs. NODE_DISABLE_COMPILE_CACHE=1 turns it off. Node 20
// has no such cache, and requiring node:module there would cost a cached build half
// a millisecond (it evaluates the ES module loader) for nothing.
if (!process.versions.node.startsWith('20.')) require('node:module').enableCompileCache?.();

function notCompiled(err, file) {
  if (!['MODULE_NOT_FOUND', 'ENOENT'].includes(err?.code) || !String(err.message).includes(file)) throw err;
  process.stderr.write('forge is not compiled yet: run `npm install` (or `npm run prepare`) in the forge directory\n');
  process.exit(1);
}

let fast;
try {
  fast = require('../dist/forge-fast.cjs');
} catch (err) {
  notCompiled(err, 'forge-fast.cjs');
}
const argv = process.argv.slice(2);
const code = fast.answer(argv);
if (code !== undefined) process.exitCode = code;
else {
  try {
    fast.runCompiledCli(argv);
  } catch (err) {
    notCompiled(err, 'forge-cli.cjs');
  }
}
