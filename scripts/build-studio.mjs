// Bundles the studio page of `forge run --dev` (cli/studio/app: Preact +
// htm) into dist/studio/, at install time (prepare) and before the tests.
// Only the CLI serves it: it never enters an agent's runtime.mjs.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'dist', 'studio');
mkdirSync(outDir, { recursive: true });
await esbuild.build({
  absWorkingDir: root,
  entryPoints: ['cli/studio/app/main.js'],
  outfile: join(outDir, 'studio.js'),
  bundle: true,
  platform: 'browser',
  format: 'esm',
  target: ['chrome110', 'firefox115', 'safari16'],
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
});
copyFileSync(join(root, 'cli/studio/app/studio.css'), join(outDir, 'studio.css'));
