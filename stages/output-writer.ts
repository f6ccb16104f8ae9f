/**
 * The one way a stage writes an artifact: into the staging directory, with
 * its size and sha256 recorded for build-manifest.json, checksums.json and
 * the archive. Stages never call writeFile themselves.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface Artifact {
  /** Relative to the output directory, forward slashes. */
  path: string;
  size: number;
  sha256: string;
  mode: number;
}

export class OutputWriter {
  private readonly artifacts = new Map<string, Artifact>();

  constructor(readonly dir: string) {}

  write(path: string, content: string | Uint8Array, options: { executable?: boolean } = {}): Artifact {
    const data = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    const target = join(this.dir, path);
    mkdirSync(dirname(target), { recursive: true });
    const mode = options.executable ? 0o755 : 0o644;
    writeFileSync(target, data, { mode });
    const artifact: Artifact = { path, size: data.length, sha256: createHash('sha256').update(data).digest('hex'), mode };
    this.artifacts.set(path, artifact);
    return artifact;
  }

  writeJson(path: string, value: unknown): Artifact {
    return this.write(path, JSON.stringify(value, null, 2) + '\n');
  }

  has(path: string): boolean {
    return this.artifacts.has(path);
  }

  /** Everything written so far, sorted by path (the order every listing uses). */
  list(): Artifact[] {
    return [...this.artifacts.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }
}
