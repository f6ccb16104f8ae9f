/**
 * The forge.yaml `config:` every file tool shares: whether files with more
 * than one hard link may be read and written (off by default: a hard link in
 * the work dir can name a file outside it).
 */
import type { FileAccessOptions } from '../../guard/verified-open.ts';
import type { ValidatedBy } from '../builtin/define.ts';

export const ALLOW_HARDLINKS_PROPERTY = {
  allow_hardlinks: { type: 'boolean', default: false, description: 'Read and write files that have more than one hard link (refused by default: a hard link can name a file outside the working directory).' },
} as const;

export const FILE_ACCESS_CONFIG_SCHEMA = { type: 'object', additionalProperties: false, properties: { ...ALLOW_HARDLINKS_PROPERTY } } as const;

export type FileAccessConfig = ValidatedBy<typeof FILE_ACCESS_CONFIG_SCHEMA>;

export function fileAccess(config: FileAccessConfig | undefined): FileAccessOptions {
  return { allowHardlinks: config?.allow_hardlinks === true };
}
