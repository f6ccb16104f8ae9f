/**
 * A program the sandbox's launchers (prlimit, bwrap) could not find: they
 * exit 127 with their own words ("prlimit: failed to execute X: No such file
 * or directory", "bwrap: execvp X: No such file or directory"), where an
 * unsandboxed spawn fails with ENOENT. Either is "X was not found".
 */
export function launcherNotFound(exitCode: number | null, stderr: string, program: string): boolean {
  if (exitCode !== 127) return false;
  const said = /^(?:prlimit: failed to execute|bwrap: execvp) (.+?): No such file or directory$/m.exec(stderr);
  return said?.[1] === program;
}
