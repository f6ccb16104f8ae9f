/**
 * The process sandbox, as one function:
 *
 *   sandboxCommand(command, args, policy) → { command, args }
 *
 * returns the argv that runs `command args` inside the sandbox the policy
 * describes. Whoever starts a tool process (the runner in run-command.ts,
 * the tool workers, a forged tool's process) spawns what it returns instead
 * of the bare command; nothing else changes (pipes, env, process group).
 *
 * With isolation 'bubblewrap' (Linux, `bwrap` working — see sandbox-probe.ts):
 *   - a private PID namespace: the server and every other process are
 *     invisible, /proc holds the sandbox's own processes only; when the
 *     namespace's pid 1 dies (its bwrap was killed, or the server died:
 *     --die-with-parent) the kernel kills everything left in it, including
 *     children that made a new session or double-forked. A one-shot command
 *     is itself pid 1 (`oneShot`), so its exit empties the namespace before
 *     the exit is reported: nothing it started outlives the call. A worker
 *     (many calls) runs under bwrap's own pid 1 and sweeps after each call;
 *   - private IPC and UTS namespaces, a new session (no terminal injection);
 *   - no capabilities but root's file-permission ones when the server runs
 *     as root (a work dir owned by another user stays writable), and a
 *     read-only /proc/sys (root may otherwise write the host kernel's
 *     settings);
 *   - the whole file system read-only, `writable` paths (the work dir)
 *     read-write, a private empty /tmp, a minimal /dev;
 *   - an empty /run (and /var/run where it is a directory of its own): the
 *     host's daemons listen there (docker.sock, the D-Bus buses — the user's
 *     session bus runs any command outside through systemd —, gpg and ssh
 *     agents under /run/user), and a Unix socket answers through a read-only
 *     mount and across network namespaces. What tools need from there (a
 *     PATH entry, the resolver's file) is bound back by tool-sandbox.ts;
 *   - `hidden` paths replaced with something empty (a directory by an empty
 *     tmpfs, a file by /dev/null): the state dir, token and key files;
 *     `reveal` paths under a hidden dir mounted back read-only;
 *   - `network: false`: a private network namespace with loopback only, so
 *     nothing outside (the server's own loopback port included) is reachable.
 * With isolation 'none' the command runs as it is: no namespaces.
 *
 * Either way, when `prlimit` is known, memory (RLIMIT_DATA: RLIMIT_AS breaks
 * Node, whose V8 reserves address space it never touches) and CPU seconds
 * (RLIMIT_CPU) are capped for the command and everything it starts; so is
 * the number of processes (RLIMIT_NPROC) where the caller knows it counts
 * the sandbox's own alone (process-cap.ts).
 */
import { lstatSync } from 'node:fs';

export type IsolationLevel = 'bubblewrap' | 'none';

export interface HiddenPath {
  path: string;
  kind: 'dir' | 'file';
}

export interface SandboxPolicy {
  isolation: IsolationLevel;
  /** bwrap's path; required for isolation 'bubblewrap'. */
  bwrap?: string;
  /** prlimit's path; without it no memory or CPU cap is applied. */
  prlimit?: string;
  /** Directories the command may write (the work dir). */
  writable: readonly string[];
  /** Directories it may read that the private /tmp would otherwise cover (the bundle or project, when under /tmp). */
  readable?: readonly string[];
  hidden: readonly HiddenPath[];
  reveal?: readonly string[];
  /**
   * Like writable and reveal, for what a tool may have deleted by the time bwrap mounts it (the work dir's
   * repository): skipped then, instead of failing the process's start.
   */
  writableIfPresent?: readonly string[];
  revealIfPresent?: readonly string[];
  /** The directory the command starts in (default: the first writable one). */
  cwd?: string;
  network: boolean;
  /** The command is the namespace's pid 1: its exit kills what it left (one-shot commands; not workers). */
  oneShot?: boolean;
  memoryBytes?: number;
  cpuSeconds?: number;
  /** RLIMIT_NPROC: only where it counts this sandbox's processes alone (process-cap.ts). */
  processes?: number;
}

export interface SandboxedCommand {
  command: string;
  args: string[];
}

/** Set inside a bubblewrap sandbox, so a tool worker knows its /proc is private (see sweepStrayProcesses). */
export const SANDBOX_ENV_FLAG = 'FORGE_SANDBOX_PIDNS';

/** The namespace and mount flags, in the order they must be applied (later mounts cover earlier ones). */
export function bubblewrapArgs(policy: Pick<SandboxPolicy, 'writable' | 'readable' | 'hidden' | 'reveal' | 'writableIfPresent' | 'revealIfPresent' | 'cwd' | 'network' | 'oneShot'>): string[] {
  // No capabilities: bwrap run by root otherwise hands the command all of root's, and with
  // CAP_SYS_ADMIN it can unmount what hides a secret or remount / writable (mounts made
  // without a user namespace are not locked). bwrap also sets no_new_privs, so no exec
  // (a set-user-ID mount, root's usual exec rule) brings them back. Root keeps what lets it
  // write files it does not own (`docker run -v $PWD:/w` as root): none of them mounts anything.
  const args = ['--die-with-parent', ...capabilityArgs(), '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--new-session'];
  if (policy.oneShot) args.push('--as-pid-1');
  if (!policy.network) args.push('--unshare-net');
  // /proc/sys read-only: bwrap covers it only when the directory itself is writable, which it
  // never is, while root owns (and may write) the files in it: kernel.core_pattern names a
  // program the host's kernel runs as root at the next crash. The rest of /proc stays writable
  // (/proc/self/uid_map: a tool's own user namespace, as Chromium's sandbox makes).
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys');
  for (const dir of privateMountPoints()) args.push('--tmpfs', dir);
  // Read-only first: a writable dir inside a readable one stays writable.
  for (const dir of policy.readable ?? []) args.push('--ro-bind', dir, dir);
  for (const dir of policy.writable) args.push('--bind', dir, dir);
  for (const dir of policy.writableIfPresent ?? []) args.push('--bind-try', dir, dir);
  args.push(...hidingArgs(policy.hidden, policy.reveal));
  for (const path of policy.revealIfPresent ?? []) args.push('--ro-bind-try', path, path);
  args.push('--setenv', SANDBOX_ENV_FLAG, '1');
  const cwd = policy.cwd ?? policy.writable[0];
  if (cwd) args.push('--chdir', cwd);
  return args;
}

/** Drops every capability, but root's file-permission ones when the server runs as root. */
export function capabilityArgs(): string[] {
  return ['--cap-drop', 'ALL', ...(runsAsRoot() ? ROOT_FILE_CAPS.flatMap((cap) => ['--cap-add', cap]) : [])];
}

/** `hidden` covered with something empty (a dir by a tmpfs, a file by /dev/null), then `reveal` bound back read-only. */
export function hidingArgs(hidden: readonly HiddenPath[], reveal: readonly string[] = []): string[] {
  const args: string[] = [];
  const hiddenDirs = hidden.filter((h) => h.kind === 'dir').map((h) => h.path);
  for (const path of hidden) {
    // A file inside a hidden dir is gone with it (binding over it would bring its name back).
    if (path.kind === 'file' && hiddenDirs.some((dir) => path.path.startsWith(dir + '/'))) continue;
    if (path.kind === 'dir') args.push('--tmpfs', path.path);
    else args.push('--ro-bind', '/dev/null', path.path);
  }
  for (const path of reveal) args.push('--ro-bind', path, path);
  return args;
}

/** What root keeps in a sandbox: writing, owning and reading files whatever their owner and mode. */
const ROOT_FILE_CAPS = ['CAP_CHOWN', 'CAP_DAC_OVERRIDE', 'CAP_FOWNER'];

function runsAsRoot(): boolean {
  return process.getuid?.() === 0;
}

let mountPoints: readonly string[] | undefined;

/**
 * The directories every sandbox replaces with an empty tmpfs: /tmp, and the
 * host's runtime dirs (/run; /var/run where it is not a link to /run) that
 * exist here — bwrap cannot make a missing one on the read-only root.
 */
export function privateMountPoints(): readonly string[] {
  mountPoints ??= ['/tmp', ...['/run', '/var/run'].filter((dir) => {
    try {
      return lstatSync(dir).isDirectory();
    } catch {
      return false;
    }
  })];
  return mountPoints;
}

export function sandboxCommand(command: string, args: readonly string[], policy: SandboxPolicy): SandboxedCommand {
  let argv = [command, ...args];
  const limits = [
    ...(policy.memoryBytes ? [`--data=${policy.memoryBytes}`] : []),
    ...(policy.cpuSeconds ? [`--cpu=${Math.max(1, Math.ceil(policy.cpuSeconds))}`] : []),
    ...(policy.processes ? [`--nproc=${policy.processes}`] : []),
  ];
  if (policy.prlimit && limits.length) argv = [policy.prlimit, ...limits, '--', ...argv];
  if (policy.isolation === 'bubblewrap') {
    if (!policy.bwrap) throw new Error('a bubblewrap sandbox needs the path of bwrap');
    argv = [policy.bwrap, ...bubblewrapArgs(policy), '--', ...argv];
  }
  return { command: argv[0], args: argv.slice(1) };
}
