/**
 * The one way a stage writes an artifact: into the staging directory, with
 * its size and sha256 recorded for build-manifest.json, checksums.json and
 * the archive. Stages never call writeFile themselves.
 *
 * The bytes are written on libuv's thread pool while the build goes on;
 * `flush()` waits for all of them (the pipeline calls it before the staging
 * directory becomes the output).
 *
 * Files get their mode exactly (0644, 0755 executable) and directories 0755,
 * whatever the umask: a build under umask 077 would otherwise leave 0600
 * files that the Dockerfile's `USER node` cannot read (EACCES at start).
 */
import { createHash } from 'node:crypto';
import { chmod as chmodCallback, mkdir as mkdirCallback, writeFile as writeFileCallback } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { promisify } from 'node:util';

// fs's callback functions, not fs/promises: a promises writeFile opens a FileHandle and loops
// its writes in JavaScript, twice the CPU per small file (a build writes hundreds).
const writeFile = promisify(writeFileCallback);
const mkdir = promisify(mkdirCallback);
const chmod = promisify(chmodCallback);
const DIRECTORY_MODE = 0o755;

export interface Artifact {
  /** Relative to the output directory, forward slashes. */
  path: string;
  size: number;
  sha256: string;
  mode: number;
}

export class OutputWriter {
  private readonly artifacts = new Map<string, Artifact>();
  /** What was written, kept for the archive (a bundle is a few MB at most). */
  private readonly contents = new Map<string, Buffer>();

  private readonly directories = new Map<string, Promise<unknown>>();
  private readonly pending: Promise<void>[] = [];

  /** `dir`, absolute and normalized: where the directories the writer owns start. */
  private readonly root: string;

  constructor(readonly dir: string) {
    this.root = resolve(dir);
  }

  write(path: string, content: string | Uint8Array, options: { executable?: boolean } = {}): Artifact {
    const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    const target = join(this.root, path);
    const mode = options.executable ? 0o755 : 0o644;
    // writeFile's mode is masked by the umask (and ignored for a file that exists): chmod sets it.
    this.pending.push(this.directory(dirname(target)).then(() => writeFile(target, data, { mode })).then(() => chmod(target, mode)));
    const artifact: Artifact = { path, size: data.length, sha256: createHash('sha256').update(data).digest('hex'), mode };
    this.artifacts.set(path, artifact);
    this.contents.set(path, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    return artifact;
  }

  /** Waits until every file is on disk; the first failed write (disk full...) is thrown here. */
  async flush(): Promise<void> {
    while (this.pending.length) await Promise.all(this.pending.splice(0));
  }

  /**
   * Makes `path` and the directories between it and the writer's own
   * directory, each chmod 0755; directories above the writer's are only
   * made, never chmodded (they are not the build's).
   */
  private directory(path: string): Promise<unknown> {
    let made = this.directories.get(path);
    if (!made) {
      const parent = dirname(path);
      const ours = path === this.root || path.startsWith(`${this.root}${sep}`);
      if (!ours || parent === path) made = mkdir(path, { recursive: true });
      else {
        const above = path === this.root ? mkdir(parent, { recursive: true }) : this.directory(parent);
        made = above.then(() => mkdir(path, { recursive: true })).then(() => chmod(path, DIRECTORY_MODE));
      }
      this.directories.set(path, made);
    }
    return made;
  }

  writeJson(path: string, value: unknown): Artifact {
    return this.write(path, JSON.stringify(value, null, 2) + '\n');
  }

  read(path: string): Buffer {
    const data = this.contents.get(path);
    if (!data) throw new Error(`${path} was not written by this build`);
    return data;
  }

  has(path: string): boolean {
    return this.artifacts.has(path);
  }

  /** Everything written so far, sorted by path (the order every listing uses). */
  list(): Artifact[] {
    return [...this.artifacts.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }
}
