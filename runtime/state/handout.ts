/**
 * A file the agent hands out (file_create), kept through the state store
 * as well as in the work dir: with replicas, `GET /files/<id>` works on any
 * of them, not only on the pod whose disk holds the file.
 */
import { activeState } from './active-state.ts';

export async function storeHandout(workDir: string, env: NodeJS.ProcessEnv, file: { name: string; mediaType: string; content: string }): Promise<{ file_id: string; url: string }> {
  const state = await activeState(workDir, env);
  const id = await state.files.put({ name: file.name, mediaType: file.mediaType, content: Buffer.from(file.content, 'utf8') });
  return { file_id: id, url: `/files/${id}` };
}
