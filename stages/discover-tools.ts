/**
 * Stage: discover tools. Lists the files in every tool_dir that may be tools
 * (.py .ts .js .mjs) and the support files that travel with them.
 */
import { existsSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import fg from 'fast-glob';
import { warning } from '../runtime/diagnostics.ts';
import type { SourceKind } from '../runtime/tools/model.ts';
import type { ProjectConfig, ToolDir } from './config/project-config.ts';
import type { StageContext } from './stage.ts';

export interface SourceFile {
  absolute: string;
  /** Relative to the project root, with forward slashes (as agent.json records it). */
  relative: string;
  /** Relative to its tool_dir. */
  withinDir: string;
  /** For messages: relative to the current directory. */
  display: string;
  kind: SourceKind | 'other';
  toolDir: ToolDir;
}

const KINDS: Record<string, SourceKind> = { '.py': 'python', '.ts': 'typescript', '.mts': 'typescript', '.js': 'javascript', '.mjs': 'javascript' };

/** Never tools, never shipped: dependency folders, caches, tests and type declarations. */
export const IGNORED = ['**/node_modules/**', '**/__pycache__/**', '**/.venv/**', '**/venv/**', '**/.git/**', '**/*.d.ts', '**/*.test.*', '**/*.spec.*', '**/*.pyc', '**/.DS_Store'];

export function discoverTools(config: ProjectConfig, ctx: StageContext): SourceFile[] {
  const files: SourceFile[] = [];
  for (const dir of config.toolDirs) {
    if (!existsSync(dir.absolute) || !statSync(dir.absolute).isDirectory()) {
      if (dir.explicit) {
        ctx.report(warning('FORGE_TOOL_DIR_MISSING', `tool directory "${dir.path}" does not exist`, dir.at, 'create it, or remove it from tool_dirs'));
      }
      continue;
    }
    const found = fg.sync('**/*', { cwd: dir.absolute, ignore: IGNORED, onlyFiles: true, dot: false, followSymbolicLinks: true });
    for (const withinDir of found.sort()) {
      const absolute = join(dir.absolute, withinDir);
      files.push({
        absolute,
        relative: relative(config.root, absolute).split('\\').join('/'),
        withinDir,
        display: relative(ctx.cwd, absolute) || absolute,
        kind: KINDS[extname(withinDir)] ?? 'other',
        toolDir: dir,
      });
    }
  }
  return files;
}
