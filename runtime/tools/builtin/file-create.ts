import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { storeHandout } from '../../state/handout.ts';
import { PathGuard } from '../../guard/path-guard.ts';
import { writeVerified } from '../../guard/verified-open.ts';
import { fsFailure, guarded, isFailure } from '../fs-results.ts';
import { fail, ok } from '../model.ts';
import { defineBuiltin } from './define.ts';

export const FILES_DIR = '.forge/files';

/** The kinds of file an agent may hand out, with the MIME type each is served as. */
export const MIME_TYPES: Record<string, string> = {
  '.md': 'text/markdown',
  '.json': 'application/json',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.txt': 'text/plain',
  '.log': 'text/plain',
  '.csv': 'text/csv',
  '.sh': 'application/x-sh',
  '.xml': 'application/xml',
  '.html': 'text/html',
  '.py': 'text/x-python',
  '.ts': 'text/typescript',
};

export default defineBuiltin({
  spec: {
    name: 'file_create',
    description: [
      `Create a file to hand to the user (a report, an export, a script), in ${FILES_DIR}/ under the working directory.`,
      `\`filename\` is a plain name: no "/" or "\\\\", no "..", not hidden. Allowed extensions: ${Object.keys(MIME_TYPES).join(' ')}. An existing file is replaced only with \`overwrite\`.`,
      'Returns the filename, its MIME type, its absolute path, its size in bytes, and `url` (`/files/<file_id>` on the agent\'s server, where a client downloads it).',
    ].join('\n'),
    category: 'builtin',
    tags: ['write'],
    inputSchema: {
      type: 'object',
      required: ['filename', 'content'],
      additionalProperties: false,
      properties: {
        filename: { type: 'string', minLength: 1, maxLength: 200, description: 'File name with an allowed extension, e.g. report.md.' },
        content: { type: 'string', description: 'The file content (UTF-8 text).' },
        overwrite: { type: 'boolean', default: false, description: 'Replace a file of the same name.' },
      },
    },
  },
  create(host) {
    // It writes into .forge/files/ (the state dir) by its own fixed path; the caller gives a plain name only.
    const guard = new PathGuard(host.workDir, { allowStateDir: true });
    return {
      async execute(args) {
        const { filename, content, overwrite } = args;
        const problem = filenameProblem(filename);
        if (problem) return fail('FORGE_FILE_NAME', `"${filename}" ${problem}`, 'give a plain file name such as report.md');
        const extension = extname(filename).toLowerCase();
        const mimeType = MIME_TYPES[extension];
        if (!mimeType) return fail('FORGE_FILE_EXTENSION', `files ending in "${extension || '(nothing)'}" cannot be created`, `allowed: ${Object.keys(MIME_TYPES).join(' ')}`);
        const target = guarded(guard, `${FILES_DIR}/${filename}`);
        if (isFailure(target)) return target;
        const existing = await stat(target.absolute).catch(() => undefined);
        if (existing && !overwrite) return fail('FORGE_FILE_EXISTS', `${FILES_DIR}/${filename} already exists`, 'set overwrite to replace it, or choose another name');
        if (existing?.isDirectory()) return fail('FORGE_FILE_IS_DIRECTORY', `${FILES_DIR}/${filename} is a directory`);
        try {
          await writeVerified(guard, target.absolute, `${FILES_DIR}/${filename}`, content, { makeParents: true, mustNotExist: !overwrite });
        } catch (err) {
          return fsFailure(err, `${FILES_DIR}/${filename}`);
        }
        const handout = await storeHandout(host.workDir, host.env, { name: filename, mediaType: mimeType, content });
        return ok({ filename, mime_type: mimeType, path: target.absolute, bytes: Buffer.byteLength(content), replaced: Boolean(existing), ...handout });
      },
    };
  },
});

function filenameProblem(name: string): string | undefined {
  if (/[/\\]/.test(name)) return 'contains a path separator';
  if (name === '.' || name === '..' || name.includes('..')) return 'contains ".."';
  if (name.startsWith('.')) return 'is a hidden name (it starts with ".")';
  if (/[\0-\x1f]/.test(name)) return 'contains a control character';
  return undefined;
}
