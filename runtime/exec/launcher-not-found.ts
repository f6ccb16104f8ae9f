/**
 * A program the sandbox's launchers (prlimit, bwrap) could not find: they
 * exit 127 with their own words ("prlimit: failed to execute X: No such file
 * or directory", "bwrap: execvp X: No such file or directory"), where an
 * unsandboxed spawn fails with ENOENT. Either is "X was not found".
 */
const NOT_FOUND = /^(?:prlimit: failed to execute|bwrap: execvp) (.+?): No such file or directory$/m;

export function launcherNotFound(exitCode: number | null, stderr: string, program: string): boolean {
  if (exitCode !== 127) return false;
  return NOT_FOUND.exec(stderr)?.[1] === program;
}

/** All a process said was bwrap's "not found" (a stdio MCP server's command, whose exit code the MCP client does not give). */
export function bwrapNotFound(stderr: string): boolean {
  return /^bwrap: execvp .+: No such file or directory$/.test(stderr.trim());
}
