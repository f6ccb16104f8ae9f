/**
 * Tool scopes. A tool name resolves in the project's tool_dirs (the local
 * scope), then the user scope (~/.forge/tools), then the global scope;
 * `scope/name` picks one. The user and global scopes hold YAML tools (what
 * `forge tool add --scope` writes). FORGE_HOME and FORGE_GLOBAL_TOOLS move
 * them (tests never touch the real home directory).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { isWithin } from '../runtime/guard/path-guard.ts';
import type { SourceFile } from './discover-tools.ts';
import type { YamlToolFile } from './yaml-tool-file.ts';

export const SCOPE_NAMES = ['local', 'user', 'global'] as const;
export type ScopeName = (typeof SCOPE_NAMES)[number];
export type SharedScope = Exclude<ScopeName, 'local'>;

export function isScopeName(text: string): text is ScopeName {
  return (SCOPE_NAMES as readonly string[]).includes(text);
}

export function scopeDir(scope: SharedScope, env: NodeJS.ProcessEnv = process.env): string {
  if (scope === 'user') return join(env.FORGE_HOME || join(homedir(), '.forge'), 'tools');
  if (env.FORGE_GLOBAL_TOOLS) return env.FORGE_GLOBAL_TOOLS;
  return process.platform === 'win32' ? join(env.PROGRAMDATA ?? 'C:\\ProgramData', 'forge', 'tools') : '/usr/local/share/forge/tools';
}

/** A path for messages: under the home directory as ~/..., elsewhere as it is. */
export function displayPath(path: string): string {
  const home = homedir();
  return path !== home && isWithin(home, path) ? `~/${relative(home, path).split(sep).join('/')}` : path;
}

export interface ScopeTool {
  scope: SharedScope;
  name: string;
  version?: string;
  file: SourceFile;
  result: YamlToolFile;
}

export class ToolScope {
  private loaded?: Promise<ScopeTool[]>;
  /** Whether anything looked in this scope (its directory then matters to the build cache). */
  consulted = false;

  constructor(
    readonly scope: SharedScope,
    readonly dir: string,
  ) {}

  static shared(env: NodeJS.ProcessEnv = process.env): Record<SharedScope, ToolScope> {
    return { user: new ToolScope('user', scopeDir('user', env)), global: new ToolScope('global', scopeDir('global', env)) };
  }

  /** Every YAML tool in the scope, by file name; a file with errors is listed with its diagnostics. */
  list(): Promise<ScopeTool[]> {
    this.consulted = true;
    this.loaded ??= this.load();
    return this.loaded;
  }

  async find(name: string): Promise<ScopeTool | undefined> {
    return (await this.list()).find((t) => t.name === name);
  }

  private async load(): Promise<ScopeTool[]> {
    // A directory that is not there, or a file (FORGE_GLOBAL_TOOLS set to one: forge-env-dirs.ts warns of it), holds no tools.
    if (!existsSync(this.dir) || !statSync(this.dir).isDirectory()) return [];
    const names = readdirSync(this.dir).filter((n) => /\.ya?ml$/.test(n) && !n.startsWith('.')).sort();
    const tools: ScopeTool[] = [];
    for (const fileName of names) {
      const absolute = join(this.dir, fileName);
      const stats = statSync(absolute);
      if (!stats.isFile()) continue;
      const file: SourceFile = {
        absolute,
        relative: absolute,
        withinDir: fileName,
        display: displayPath(absolute),
        kind: 'yaml',
        toolDir: { path: `@${this.scope}`, absolute: this.dir, at: {}, explicit: false },
        stat: { size: stats.size, mtimeMs: stats.mtimeMs },
        scope: this.scope,
      };
      const { readYamlToolFile } = await import('./yaml-tool-file.ts');
      const result = await readYamlToolFile(file, absolute);
      if (result.sha256) file.sha256 = result.sha256;
      const name = result.spec?.name ?? fileName.replace(/\.ya?ml$/, '');
      if (tools.some((t) => t.name === name)) continue; // the first file (by name) wins
      const version = result.spec ? result.definition.version : undefined;
      tools.push({ scope: this.scope, name, ...(version ? { version } : {}), file, result });
    }
    return tools;
  }
}
