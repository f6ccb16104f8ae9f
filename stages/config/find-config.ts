/** Finds forge.yaml like `go` finds go.mod: here, or in the nearest directory above. Node builtins only (no-op path). */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export const CONFIG_FILE_NAMES = ['forge.yaml', 'forge.yml'];

export function findConfigFile(dir: string): string | undefined {
  for (let current = resolve(dir); ; current = dirname(current)) {
    for (const name of CONFIG_FILE_NAMES) {
      const candidate = join(current, name);
      if (existsSync(candidate)) return candidate;
    }
    if (dirname(current) === current) return undefined;
  }
}

export function locateConfig(options: { configFile?: string }, cwd: string): string | undefined {
  return options.configFile ? resolve(cwd, options.configFile) : findConfigFile(cwd);
}
