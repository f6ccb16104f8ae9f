/**
 * Why a file a setting names could not be read, in words: Node's
 * "ENOENT: no such file or directory, open '/abs/path'" is the errno's name
 * and the path again (a diagnostic names the path once, as its place), and
 * its bare code (ENOENT, EACCES) means nothing to whoever set the variable.
 */
const WHY: Record<string, string> = {
  ENOENT: 'there is no such file',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'a part of its path is a file, not a directory',
  ELOOP: 'its symbolic links go round in a loop',
  ENAMETOOLONG: 'the path is too long',
};

export function whyUnreadable(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  return (code && WHY[code]) ?? String((err as Error).message ?? err).split('\n')[0];
}
