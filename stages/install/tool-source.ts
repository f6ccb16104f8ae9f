/**
 * Where `forge tool install SOURCE` gets tools from: a local folder, a git
 * repository (a file:// or other git URL, or the path of a bare or normal
 * repository, cloned with the real `git clone`), or an npm package tarball
 * (`npm pack`'s .tgz, whose files sit under package/). Each is fetched into
 * a temporary folder that the caller removes.
 */
import { execFile } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import { ForgeError } from '../../runtime/diagnostics.ts';

export interface FetchedSource {
  /** The folder holding the source's files. */
  dir: string;
  /** How the source was named, for messages. */
  label: string;
  kind: 'folder' | 'git' | 'tarball';
  /** Where sources it names by a relative path are resolved from: its own path (../digest.git is its sibling). */
  base: string;
  cleanup(): void;
}

export class SourceError extends ForgeError {
  constructor(message: string, hint?: string) {
    super('FORGE_INSTALL_SOURCE', message, hint);
  }
}

export async function fetchSource(source: string, base: string = process.cwd()): Promise<FetchedSource> {
  const path = source.startsWith('file://') ? undefined : resolve(base, source);
  if (path && existsSync(path) && statSync(path).isFile()) {
    if (!/\.(tgz|tar\.gz)$/.test(path)) throw new SourceError(`${source} is a file, but not an npm package tarball (.tgz)`);
    return extractTarball(path, source);
  }
  if (path && existsSync(path) && statSync(path).isDirectory() && !isGitRepository(path)) {
    return { dir: path, label: source, kind: 'folder', base: path, cleanup: () => {} };
  }
  if (path && !existsSync(path) && !looksLikeGitUrl(source)) throw new SourceError(`${source}: no such folder, tarball or git repository`, `${path} does not exist; a source is a folder, an npm package tarball (.tgz) or a git repository (a URL such as https://host/tools.git, or file:///srv/git/tools.git)`);
  const location = source.startsWith('file://') ? fileURLToPath(source) : path && existsSync(path) ? path : base;
  return cloneGit(path && existsSync(path) ? path : source, source, location);
}

function looksLikeGitUrl(source: string): boolean {
  return /^(file|https?|ssh|git):\/\//.test(source) || /^[\w.-]+@[\w.-]+:/.test(source) || source.endsWith('.git');
}

/** A bare repository (HEAD + objects/ + refs/) or a working copy (.git/). */
function isGitRepository(dir: string): boolean {
  return existsSync(join(dir, '.git')) || (existsSync(join(dir, 'HEAD')) && existsSync(join(dir, 'objects')) && existsSync(join(dir, 'refs')));
}

async function cloneGit(url: string, label: string, base: string): Promise<FetchedSource> {
  const dir = mkdtempSync(join(tmpdir(), 'forge-install-git-'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  await new Promise<void>((done, fail) => {
    // No prompts: a source that needs credentials fails instead of waiting for a person.
    execFile('git', ['clone', '--quiet', '--depth', '1', '--', url, dir], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' }, timeout: 120_000 }, (err, _stdout, stderr) => {
      if (!err) return done();
      cleanup();
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      fail(new SourceError(missing ? 'git is not installed: install it to install tools from a git repository' : `git clone ${label} failed: ${stderr.trim() || err.message}`));
    });
  });
  return { dir, label, kind: 'git', base, cleanup };
}

/** Unpacks an npm tarball's files (under package/), refusing any entry that would land outside the folder. */
async function extractTarball(file: string, label: string): Promise<FetchedSource> {
  const dir = mkdtempSync(join(tmpdir(), 'forge-install-tgz-'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: unknown) => void chunks.push(c as Buffer));
    stream.on('end', () => {
      const name = normalize(header.name).replace(/^package[\\/]/, '');
      const target = join(dir, name);
      if (header.type === 'file' && !name.startsWith('..') && !name.startsWith('/') && target.startsWith(dir + '/')) {
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, Buffer.concat(chunks));
      }
      next();
    });
    stream.resume();
  });
  try {
    await pipeline(createReadStream(file), createGunzip(), extract);
  } catch (err) {
    cleanup();
    throw new SourceError(`${label} is not a readable npm package tarball: ${(err as Error).message}`);
  }
  return { dir, label, kind: 'tarball', base: file, cleanup };
}
