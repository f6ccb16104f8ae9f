/**
 * Files handed out by the agent (file_create), kept through the state store
 * so that `GET /files/:id` works on any replica. The `file:` store keeps
 * them under .forge/state-files/<id> with a small JSON header file.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileRecords, StoredFile } from './store.ts';

export const FILE_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class LocalFileRecords implements FileRecords {
  constructor(private readonly dir: string) {}

  async put(file: Omit<StoredFile, 'id'>): Promise<string> {
    const id = randomUUID();
    await mkdir(this.dir, { recursive: true });
    const temp = join(this.dir, `${id}.tmp`);
    await writeFile(temp, file.content);
    await writeFile(join(this.dir, `${id}.json`), JSON.stringify({ name: file.name, mediaType: file.mediaType }));
    await rename(temp, join(this.dir, id));
    return id;
  }

  async get(id: string): Promise<StoredFile | undefined> {
    if (!FILE_ID_PATTERN.test(id)) return undefined;
    try {
      const meta = JSON.parse(await readFile(join(this.dir, `${id}.json`), 'utf8')) as { name: string; mediaType: string };
      return { id, name: meta.name, mediaType: meta.mediaType, content: await readFile(join(this.dir, id)) };
    } catch {
      return undefined;
    }
  }
}
