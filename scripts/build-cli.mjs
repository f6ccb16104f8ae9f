// Compiles the `forge` command to dist/ (run by `npm install` through the
// prepare script). The installed command runs this JavaScript, never
// TypeScript through a loader: that would cost several times a node start.
// Commands are split into chunks so each loads only what it uses.
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
await import('./generate-validators.mjs');
rmSync(join(root, 'dist'), { recursive: true, force: true });
await import('./build-vendor.mjs');
await import('./build-studio.mjs');
await esbuild.build({
  absWorkingDir: root,
  entryPoints: { forge: 'cli/forge.ts' },
  outdir: 'dist',
  chunkNames: 'forge-[name]-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // esbuild finds its native binary relative to its own package.
  external: ['esbuild'],
  banner: { js: "import { createRequire as __forgeCreateRequire } from 'node:module'; const require = __forgeCreateRequire(import.meta.url);" },
  legalComments: 'none',
  // Smaller files parse faster at every start; names stay readable in --verbose stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
});
