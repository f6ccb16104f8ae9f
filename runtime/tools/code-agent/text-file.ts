/**
 * Reading a whole text file for editing: it must be a regular file, not
 * binary, and small enough to hold in memory.
 */
import type { GuardedPath, PathGuard } from '../../guard/path-guard.ts';
import { openForRead, type FileAccessOptions } from '../../guard/verified-open.ts';
import { fsFailure, looksBinary, type Failure } from '../fs-results.ts';
import { fail } from '../model.ts';
import { WHOLE_READ_LIMIT } from './file-read.ts';

export interface TextFile {
  text: string;
  mode: number;
}

export async function readTextFile(guard: PathGuard, target: GuardedPath, path: string, access: FileAccessOptions = {}): Promise<TextFile | Failure> {
  try {
    const { handle, info } = await openForRead(guard, target.absolute, path, access, true);
    try {
      if (info.isDirectory()) return fail('FORGE_FILE_IS_DIRECTORY', `"${path}" is a directory`, 'give a file path') as Failure;
      if (info.size > WHOLE_READ_LIMIT) return fail('FORGE_FILE_TOO_LARGE', `"${path}" is ${info.size} bytes; files up to ${WHOLE_READ_LIMIT} bytes can be edited`) as Failure;
      const bytes = await handle.readFile();
      if (looksBinary(bytes)) return fail('FORGE_FILE_BINARY', `"${path}" is a binary file`, 'only text files can be edited') as Failure;
      return { text: bytes.toString('utf8'), mode: info.mode & 0o7777 };
    } finally {
      await handle.close();
    }
  } catch (err) {
    return fsFailure(err, path);
  }
}
