/**
 * What a version manager's `python3` shim (pyenv, asdf) runs, kept between
 * Forge commands in Forge's machine-wide cache. Asking a shim starts the
 * manager's shell scripts before Python itself (about 60 ms here, as much as
 * the rest of a build's Python check), and the answer changes only when what
 * the manager reads to choose a version changes. So an answer is filed under
 * all of that, read now:
 *
 *   - the shim file itself (`pyenv rehash` rewrites it);
 *   - the manager's environment (PYENV_*, ASDF_*) and PATH;
 *   - the version files from the working directory up to / (`.python-version`,
 *     `.tool-versions`), the global ones (pyenv's `version`, `~/.tool-versions`)
 *     and asdf's config (`~/.asdfrc`);
 *   - the manager's installed versions (a new 3.12.x changes what "3.12" means).
 *
 * A kept answer is used only while the interpreter it names is the same file
 * (inode, size, mtime). Anything else is asked again and filed anew. Shims are
 * recognized by their folder's name, `shims`; any other script is asked each time.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { pathIdentity } from '../../runtime/file-identity.ts';
import type { KeptShimAnswer, ShimAnswers } from '../../runtime/tools/custom/python-interpreter.ts';
import { markUsed, removeUnused, writeFileAtomically } from '../blob-cache.ts';
import { nodeCrypto } from '../node-crypto.ts';

const ENTRY = '.json';

interface Entry {
  executable: string;
  /** The interpreter's file when the answer was kept. */
  stamp: string;
}

/** Shim answers kept in `cacheDir` (Forge's machine-wide cache). */
export function shimAnswersIn(cacheDir: string): ShimAnswers {
  const dir = join(cacheDir, 'python-shims');
  return {
    open(shim: string, env: NodeJS.ProcessEnv, cwd = process.cwd()): KeptShimAnswer | undefined {
      const fingerprint = shimFingerprint(shim, env, cwd);
      if (fingerprint === undefined) return undefined;
      const file = join(dir, nodeCrypto().createHash('sha256').update(fingerprint).digest('hex') + ENTRY);
      const kept = readEntry(file);
      if (kept && pathIdentity(kept.executable) === kept.stamp) {
        markUsed(file);
        return { executable: kept.executable };
      }
      return {
        remember(executable: string) {
          const stamp = pathIdentity(executable);
          if (stamp === '-') return;
          try {
            writeFileAtomically(file, JSON.stringify({ executable, stamp } satisfies Entry));
            removeUnused(dir, ENTRY);
          } catch {
            // A read-only cache: the shim is asked again next time.
          }
        },
      };
    },
  };
}

/** Everything the shim's manager reads to choose an interpreter, as text; undefined when `shim` is not a manager's shim. */
function shimFingerprint(shim: string, env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const shims = dirname(shim);
  if (basename(shims) !== 'shims') return undefined;
  let real: string;
  try {
    real = realpathSync(shim);
  } catch {
    return undefined;
  }
  const managerRoot = dirname(shims); // ~/.pyenv, ~/.asdf
  const versionFiles = ['.python-version', env.ASDF_DEFAULT_TOOL_VERSIONS_FILENAME || '.tool-versions'];
  const starts = new Set([cwd, ...(env.PYENV_DIR ? [env.PYENV_DIR] : [])]);
  const watched = [
    real,
    ...[...starts].flatMap((start) => ancestors(start).flatMap((d) => versionFiles.map((name) => join(d, name)))),
    join(env.PYENV_ROOT || managerRoot, 'version'),
    join(env.PYENV_ROOT || managerRoot, 'versions'),
    join(env.ASDF_DATA_DIR || managerRoot, 'installs', 'python'),
    join(env.HOME || homedir(), versionFiles[1]!),
    // asdf reads .python-version too when its config says legacy_version_file = yes.
    env.ASDF_CONFIG_FILE || join(env.HOME || homedir(), '.asdfrc'),
  ];
  const managerEnv = Object.keys(env)
    .filter((name) => /^(PYENV|ASDF)_/.test(name))
    .sort()
    .map((name) => `${name}=${env[name]}`);
  return JSON.stringify({ shim, cwd, path: env.PATH ?? '', env: managerEnv, files: watched.map((f) => `${f} ${pathIdentity(f)}`) });
}

/** The folder and each one above it, up to the root. */
function ancestors(start: string): string[] {
  const dirs = [start];
  for (let d = dirname(start); d !== dirs[dirs.length - 1]; d = dirname(d)) dirs.push(d);
  return dirs;
}


function readEntry(file: string): Entry | undefined {
  try {
    const entry = JSON.parse(readFileSync(file, 'utf8')) as Partial<Entry>;
    return typeof entry.executable === 'string' && typeof entry.stamp === 'string' ? (entry as Entry) : undefined;
  } catch {
    return undefined;
  }
}
