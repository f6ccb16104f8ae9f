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
  const message = String((err as Error).message ?? err).split('\n')[0];
  return (code && WHY[code]) ?? withoutCodeAndPath(message, code);
}

/** An errno not listed above keeps Node's description, without the code before it or the call and path after it. */
function withoutCodeAndPath(message: string, code: string | undefined): string {
  const described = /^([A-Z][A-Z0-9_]+): (.+?)(?:, [a-z_]+(?: '.*')?)?$/.exec(message);
  return described && described[1] === code ? described[2] : message;
}
