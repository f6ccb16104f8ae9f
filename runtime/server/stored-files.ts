/** `GET /files/:id`: a file the agent handed out (file_create), from the state store, so any replica serves it. */
import type { ServerResponse } from 'node:http';
import type { FileRecords } from '../state/store.ts';
import { sendError } from './respond.ts';

export async function serveStoredFile(res: ServerResponse, files: FileRecords, id: string): Promise<void> {
  const file = await files.get(id);
  if (!file) return sendError(res, 404, 'FORGE_NOT_FOUND', `no file with id "${id}"`, 'use the file_id a file_create result gave');
  const name = file.name.replace(/[^A-Za-z0-9._-]/g, '_');
  res.writeHead(200, {
    'content-type': file.mediaType,
    'content-length': file.content.length,
    // Served as a download, never rendered in the agent's origin (an agent-written .html stays inert).
    'content-disposition': `attachment; filename="${name}"`,
    'x-content-type-options': 'nosniff',
  });
  res.end(file.content);
}
