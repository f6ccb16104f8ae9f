/**
 * The sandbox the running agent puts around every tool process. Installed
 * once at start (installToolSandbox: the probe's answer, forge.yaml's
 * `sandbox:` settings, the work dir); from then on spawnInGroup asks
 * toolProcessCommand for the argv of each process it starts. Which tool a
 * process belongs to (for its own memory/CPU/network settings) comes from
 * the call in progress: the registry runs every tool's execute() inside
 * runAsTool(), so nothing between the registry and the spawn passes it on.
 *
 * Nothing installed (library use, `forge tool run`): processes start as
 * they are, with no caps.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { chownSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { privateMountPoints, sandboxCommand, type HiddenPath, type IsolationLevel, type SandboxedCommand, type SandboxPolicy } from './sandbox.ts';
import { identityOf, type FileIdentity } from './file-identity.ts';
import { gitDirStep, gitDirWalkRoots } from './git-dirs.ts';
import { homeCredentialPaths } from './home-credentials.ts';
import { DEFAULT_TOOL_PROCESSES, effectiveProcessCap, ownProcessHardLimit, processCapProblem } from './process-cap.ts';
import type { SandboxProbe } from './sandbox-probe.ts';

export interface ToolLimits {
  /** @asType integer */ memory_bytes?: number;
  /** @asType integer */ cpu_seconds?: number;
  /**
   * How many processes (threads included) the tool's sandbox may hold at once.
   * @asType integer
   */
  processes?: number;
  /** false: no network at all (loopback of its own only). */
  network?: boolean;
}

/** forge.yaml's `sandbox:` as agent.json records it. */
export interface SandboxSettings extends ToolLimits {
  /** auto: isolate where the platform allows, warn otherwise; required: refuse to start without; off: never. */
  mode: 'auto' | 'required' | 'off';
  /** Credential stores of the home that tool processes may read after all (`~/.kube`), as forge.yaml wrote them. */
  visible?: string[];
  tools?: Record<string, ToolLimits>;
}

/** Memory cap of a tool process when forge.yaml names none. */
export const DEFAULT_TOOL_MEMORY_BYTES = 1024 ** 3;

export interface ToolCallScope {
  tool: string;
  /** The call's temporary directory, once the call created it (bound writable into the sandbox). */
  tmpDir?: () => string | undefined;
}

const scope = new AsyncLocalStorage<ToolCallScope>();

/** Runs `fn` as the given tool's call: the processes it starts get that tool's sandbox settings. */
export function runAsTool<T>(call: ToolCallScope, fn: () => T): T {
  return scope.run(call, fn);
}

interface Installed {
  /** What this Node reserves writable before running any code (Node 24: ~570 MB), added to a Node tool process's cap. */
  nodeBaselineBytes: number;
  probe: SandboxProbe;
  isolation: IsolationLevel;
  settings: SandboxSettings;
  /** Who chose the mode: forge.yaml, or FORGE_SANDBOX (an operator, or the image forge package made). */
  modeFrom: ModeSource;
  workDir: string;
  /** The bundle's dir or the project root: tools' own files, readable. */
  codeDirs: string[];
  /** Where the home's credential stores are (whether or not they exist yet), less those `sandbox.visible` shows: resolved once. */
  credentialStores: string[];
  /** Why tool sandboxes get no process cap here (undefined: they get one). */
  processCapProblem?: string;
  /** The agent's own hard RLIMIT_NPROC: a sandbox's cap cannot be above it. */
  processHardLimit: number;
}

let installed: Installed | undefined;
/** Paths no tool process may see (token and key files, the state dir); filled by whoever creates them. */
const hiddenPaths = new Set<string>();

export interface SandboxStatus {
  isolation: IsolationLevel;
  mode: SandboxSettings['mode'];
  /** Why isolation is 'none' (platform refusal, or mode off). */
  reason?: string;
  memory_caps: boolean;
  default_memory_bytes?: number;
  /** The process cap of a tool's sandbox when forge.yaml names none; absent where none applies (`process_cap_problem` says why). */
  default_processes?: number;
  /** The agent's own hard process limit, when it is what lowered the caps. */
  process_hard_limit?: number;
  process_cap_problem?: string;
}

export type ModeSource = 'forge.yaml' | 'FORGE_SANDBOX';

/**
 * What makes bubblewrap work in a container, for an image that requires it (FORGE_SANDBOX=required,
 * as `forge package` sets): user namespaces the seccomp profile allows, a /proc without masked paths
 * (mounting the sandbox's own is refused otherwise), no ambient capabilities for a non-root user.
 */
export const CONTAINER_SANDBOX_HINT =
  'let the container make namespaces (docker run --security-opt seccomp=unconfined --security-opt systempaths=unconfined, plus apparmor=unconfined where AppArmor confines containers; runc or Kubernetes: a seccomp profile that allows user namespaces, an unmasked /proc, no ambient capabilities), see `node runtime.mjs doctor`; or run tools without isolation on purpose with FORGE_SANDBOX=auto (a warning) or off';

/** Installs the sandbox for this process. Throws when `required` cannot be met (the caller reports it). */
export function installToolSandbox(probe: SandboxProbe, settings: SandboxSettings, workDir: string, codeDirs: readonly string[] = [], modeFrom: ModeSource = 'forge.yaml'): SandboxStatus {
  const isolation = settings.mode === 'off' ? 'none' : probe.isolation;
  if (settings.mode === 'required' && isolation !== 'bubblewrap') {
    const why = probe.reason ?? 'no sandbox is available';
    if (modeFrom === 'forge.yaml') throw new SandboxRequiredError(`forge.yaml says sandbox: required, but ${why}`);
    throw new SandboxRequiredError(`FORGE_SANDBOX=required in the environment refuses to run tools without a sandbox, but ${why}`, CONTAINER_SANDBOX_HINT);
  }
  const root = resolve(workDir);
  // The state dir exists before any tool starts, so every sandbox hides it, even one started before the server writes there.
  if (isolation === 'bubblewrap') {
    try {
      mkdirSync(join(root, '.forge'), { recursive: true });
    } catch {
      // a read-only work dir: nothing can be written there, so there is no state to hide either
    }
  }
  const shown = (settings.visible ?? []).map(expandHome);
  const credentialStores = homeCredentialPaths().filter((store) => !shown.some((path) => holds(path, store)));
  installed = {
    probe,
    isolation,
    settings,
    modeFrom,
    workDir: root,
    codeDirs: codeDirs.map((d) => resolve(d)),
    nodeBaselineBytes: ownDataBytes(),
    credentialStores,
    processCapProblem: processCapProblem({ ...probe, isolation }),
    processHardLimit: ownProcessHardLimit(),
  };
  return sandboxStatus()!;
}

/** The installed probe (bwrap and prlimit paths) for a process that builds its own policy (a forged tool's sandbox). */
export function installedSandboxProbe(): SandboxProbe | undefined {
  return installed && installed.isolation === 'bubblewrap' ? installed.probe : undefined;
}

export function uninstallToolSandbox(): void {
  installed = undefined;
}

export class SandboxRequiredError extends Error {
  /** What to do, when it differs from the callers' own (forge.yaml's mode): set for FORGE_SANDBOX=required. */
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

export function sandboxStatus(): SandboxStatus | undefined {
  if (!installed) return undefined;
  const { probe, isolation, settings } = installed;
  const reason = settings.mode === 'off' ? (installed.modeFrom === 'forge.yaml' ? 'sandbox: off in forge.yaml' : 'FORGE_SANDBOX=off') : probe.reason;
  return {
    isolation,
    mode: settings.mode,
    ...(reason && isolation === 'none' ? { reason } : {}),
    memory_caps: probe.prlimit !== undefined,
    ...(probe.prlimit ? { default_memory_bytes: settings.memory_bytes ?? DEFAULT_TOOL_MEMORY_BYTES } : {}),
    ...(installed.processCapProblem ? { process_cap_problem: installed.processCapProblem } : processCaps(settings.processes ?? DEFAULT_TOOL_PROCESSES, installed.processHardLimit)),
  };
}

function processCaps(wanted: number, hardLimit: number): Pick<SandboxStatus, 'default_processes' | 'process_hard_limit'> {
  const { cap, lowered } = effectiveProcessCap(wanted, hardLimit);
  return lowered ? { default_processes: cap, process_hard_limit: hardLimit } : { default_processes: cap };
}

/** Keeps a secret file or a state dir out of every tool process (an empty stand-in is mounted over it). */
export function hideFromTools(path: string): void {
  hiddenPaths.add(resolve(path));
}

/** The settings that apply to one tool: its own entry over the defaults. */
export function toolLimits(settings: SandboxSettings, tool: string | undefined): Required<Pick<ToolLimits, 'network'>> & ToolLimits {
  const own = (tool && settings.tools?.[tool]) || {};
  return {
    memory_bytes: own.memory_bytes ?? settings.memory_bytes ?? DEFAULT_TOOL_MEMORY_BYTES,
    cpu_seconds: own.cpu_seconds ?? settings.cpu_seconds,
    processes: own.processes ?? settings.processes ?? DEFAULT_TOOL_PROCESSES,
    network: own.network ?? settings.network ?? true,
  };
}

/**
 * The argv that starts a tool process under the installed sandbox. A
 * worker (long-lived, many calls) gets no CPU-seconds cap: its calls have
 * timeouts, and a cap on its lifetime total would kill a healthy worker.
 */
export function toolProcessCommand(command: string, args: readonly string[], options: { cwd: string; worker?: boolean; env?: Record<string, string> }): SandboxedCommand {
  if (!installed) return { command, args: [...args] };
  const call = scope.getStore();
  const limits = toolLimits(installed.settings, call?.tool);
  const tmpDir = call?.tmpDir?.();
  const repository = repositoryMounts(installed.workDir);
  const policy: SandboxPolicy = {
    isolation: installed.isolation,
    bwrap: installed.probe.bwrap,
    prlimit: installed.probe.prlimit,
    // The repository's .git bound onto itself: a mount point cannot be renamed away (EBUSY), so a tool cannot
    // set a .git of its own making in its place, around the read-only config and hooks below.
    writable: [installed.workDir, ...(tmpDir ? [tmpDir] : [])],
    writableIfPresent: repository.writable,
    readable: [...installed.codeDirs, ...programDirsInPrivateMounts(command, options.env?.PATH), ...resolverInPrivateMounts()],
    hidden: currentHiddenPaths([installed.workDir, ...installed.codeDirs], installed.credentialStores, privateMountPoints()),
    reveal: [installed.workDir, ...installed.codeDirs].flatMap(revealedState),
    revealIfPresent: repository.readOnly,
    cwd: options.cwd,
    network: limits.network,
    oneShot: !options.worker,
    // RLIMIT_DATA counts what V8 reserves writable at start (hundreds of MB on Node 24): a Node tool process
    // (started with this very node) gets that on top, so `memory:` is what its code may use.
    memoryBytes: limits.memory_bytes && (command === process.execPath ? limits.memory_bytes + installed.nodeBaselineBytes : limits.memory_bytes),
    cpuSeconds: options.worker ? undefined : limits.cpu_seconds,
    // A worker's cap holds for its whole life: what its calls start, and its own threads.
    processes: installed.processCapProblem ? undefined : effectiveProcessCap(limits.processes!, installed.processHardLimit).cap,
  };
  return sandboxCommand(command, args, policy);
}

/**
 * What a tool process's mounts depend on that can change while the agent runs:
 * the paths hidden (a credential store made after start, by `aws configure`
 * in another terminal; a secret file hidden later), the work dir's
 * repository (a `git init`, a submodule added) and the state shown. A
 * long-lived tool process started under other mounts is started again
 * (mounts-at-start.ts). Undefined without a sandbox. `forStart`: for a
 * process about to start, whose start makes a missing hooks dir.
 *
 * Each mounted file is named with its identity too: a file replaced by a
 * rename (git's credential store, `docker login`, a shell saving history;
 * git's own config, written through config.lock) takes away what was
 * mounted over the old one, in every sandbox that has it.
 */
export function toolMountsKey(forStart = false): ToolMountsKey | undefined {
  if (!installed || installed.isolation !== 'bubblewrap') return undefined;
  const dirs = [installed.workDir, ...installed.codeDirs];
  const repository = repositoryMounts(installed.workDir, forStart);
  const named = (paths: readonly string[]) => paths.map((path) => `${path} ${fileIdentity(path)}`);
  const hidden = currentHiddenPaths(dirs, installed.credentialStores, privateMountPoints()).map((h) => `${h.kind} ${h.path} ${JSON.stringify(h.identity)}`).join('\n');
  return { hidden, all: `${hidden}\n${JSON.stringify([named(repository.writable), named(repository.readOnly), dirs.flatMap(revealedState)])}` };
}

/** Which file a path names now (file-identity.ts), as text. */
function fileIdentity(path: string): string {
  const info = statSync(path, { throwIfNoEntry: false });
  return info ? JSON.stringify(identityOf(info)) : 'none';
}

export interface ToolMountsKey {
  /** What is hidden, and which file each is. */
  hidden: string;
  /** That, the work dir's repository as it is mounted, and the state shown. */
  all: string;
}

/**
 * The private /tmp and /run would hide a program that lives under them (an
 * allowlisted binary resolved there, a PATH entry there, NixOS's
 * /run/current-system/sw/bin): those directories stay readable.
 */
function programDirsInPrivateMounts(command: string, path: string | undefined): string[] {
  const dirs = [...(isAbsolute(command) ? [dirname(command)] : []), ...(path ?? '').split(delimiter)].filter((d) => d && isAbsolute(d));
  const real = dirs.flatMap((dir) => {
    try {
      const resolved = realpathSync(dir);
      return statSync(resolved).isDirectory() && programDirMayShow(resolved) ? [resolved] : [];
    } catch {
      return [];
    }
  });
  return [...new Set(real)];
}

/** A directory inside /tmp or /run, but never one of them whole, nor a user's runtime dir (/run/user/1000: their buses and agents). */
function programDirMayShow(dir: string): boolean {
  return privateMountPoints().some((point) => dir !== point && holds(point, dir)) && !/^\/run\/user(\/[^/]+)?$/.test(dir);
}

/** systemd-resolved's /etc/resolv.conf is a link into /run: the file it names stays readable, or no tool could resolve a name. */
export function resolverInPrivateMounts(resolvConf = '/etc/resolv.conf'): string[] {
  try {
    const target = realpathSync(resolvConf);
    return target !== resolvConf && inPrivateMount(target) ? [target] : [];
  } catch {
    return [];
  }
}

function inPrivateMount(path: string): boolean {
  return privateMountPoints().some((dir) => holds(dir, path));
}

/** This process's writable data (VmData), read at start: a fair measure of what the same Node reserves before any tool code runs. */
function ownDataBytes(): number {
  try {
    const kb = /^VmData:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return kb ? Number(kb[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * What every tool process has hidden (the state dir, token and key files, the
 * credential stores of the home), for a process that builds its own policy:
 * a forged tool's, whose code lives in the state dir and is bound back.
 */
export function hiddenFromToolProcesses(): HiddenPath[] {
  return installed ? currentHiddenPaths([installed.workDir, ...installed.codeDirs], installed.credentialStores, privateMountPoints()) : [];
}

/**
 * What a stdio MCP server's sandbox hides (server-sandbox.ts), when the installed sandbox is
 * bubblewrap: the state dir, token and key files as for tools, what tools run from there shown
 * again. Not the home's credential stores: a server the developer chose may be there to use
 * them (a cloud or git server). Its /tmp and /run are the host's, so what lies there is hidden too.
 */
export function serverSandboxMounts(): { bwrap: string; hidden: HiddenPath[]; reveal: string[] } | undefined {
  if (!installed || installed.isolation !== 'bubblewrap' || !installed.probe.bwrap) return undefined;
  const dirs = [installed.workDir, ...installed.codeDirs];
  return { bwrap: installed.probe.bwrap, hidden: currentHiddenPaths(dirs, [], []), reveal: dirs.flatMap(revealedState) };
}

/**
 * Each path to hide, as what it is (a link followed: bwrap mounts over what
 * it names, and an absolute link dangles inside the sandbox). One that leads
 * into /dev, /proc, /sys, or a private mount outside the dirs bound back,
 * needs nothing (`~/.bash_history` → /dev/null is common), and a credential
 * store that holds the work dir or the tools' code, or that forge.yaml's
 * `sandbox.visible` names, is left.
 */
function currentHiddenPaths(dirs: readonly string[], credentialStores: readonly string[], privateMounts: readonly string[]): (HiddenPath & { identity: FileIdentity })[] {
  const hidden: (HiddenPath & { identity: FileIdentity })[] = [];
  for (const path of new Set([...dirs.map((d) => join(d, '.forge')), ...hiddenPaths, ...credentialStores])) {
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      continue; // not there (yet), or a dangling link: nothing to hide
    }
    if (['/dev', '/proc', '/sys'].some((root) => holds(root, real))) continue;
    // A private mount hides it already, unless it is inside a dir bound back (a work dir under /tmp).
    if (privateMounts.some((root) => holds(root, real)) && !dirs.some((dir) => holds(dir, real))) continue;
    if (dirs.some((dir) => holds(real, dir) || holds(path, dir))) continue;
    try {
      const info = statSync(real);
      hidden.push({ path: real, kind: info.isDirectory() ? 'dir' : 'file', identity: identityOf(info) });
    } catch {
      // gone meanwhile
    }
  }
  return hidden;
}

/** `path` is `dir` or inside it. */
function holds(dir: string, path: string): boolean {
  return path === dir || path.startsWith(`${dir}/`);
}

function expandHome(path: string): string {
  return path === '~' || path.startsWith('~/') ? join(process.env.HOME || homedir(), path.slice(1)) : resolve(path);
}

/**
 * The work dir's repository as tool processes get it. Its config and hooks
 * (and each submodule's) are read-only: the host's own git runs what they
 * name (core.fsmonitor, a filter, a hook) the next time the person who works
 * there runs `git status`, and a shell prompt runs one at every line —
 * outside any sandbox. `.git` is bound onto itself, so it cannot be renamed
 * away (EBUSY) for one of a tool's making. A linked worktree's `.git` file
 * is read-only. A missing hooks dir is made (empty, as `git init` makes it)
 * so that none can be planted either. Only what is really a file or a
 * directory is bound: a link would be followed to whatever it names, the
 * hidden state included.
 */
function repositoryMounts(workDir: string, prepare = true): { writable: string[]; readOnly: string[] } {
  const gitDir = join(workDir, '.git');
  const git = entryOf(gitDir);
  if (git?.isFile()) return { writable: [], readOnly: [gitDir] };
  if (!git?.isDirectory()) return { writable: [], readOnly: [] };
  const hooks = join(gitDir, 'hooks');
  if (prepare && !entryOf(hooks)) {
    try {
      mkdirSync(hooks);
      // Made by the server for the repository's owner, not for whoever the server runs as.
      if (process.getuid?.() === 0) chownSync(hooks, git.uid, git.gid);
    } catch {
      // cannot be made (a read-only work dir): nothing can be planted there either
    }
  }
  const readOnly = [gitDir, ...submoduleGitDirs(gitDir)].flatMap((dir) => [
    ...(entryOf(join(dir, 'config'))?.isFile() ? [join(dir, 'config')] : []),
    ...(entryOf(join(dir, 'hooks'))?.isDirectory() ? [join(dir, 'hooks')] : []),
  ]);
  return { writable: [gitDir], readOnly };
}

/** The entry itself (a link is not followed), or undefined when there is none. */
function entryOf(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** Submodules' git dirs under `gitDir`/modules (exec/git-dirs.ts), links not followed, at most 200. */
function submoduleGitDirs(gitDir: string): string[] {
  const found: string[] = [];
  const pending = gitDirWalkRoots(gitDir, false);
  for (let visited = 0; pending.length && visited < 1000 && found.length < 200; visited++) {
    const dir = pending.pop()!;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true }).map((e) => ({ name: e.name, isDir: e.isDirectory() }));
    } catch {
      continue;
    }
    const step = gitDirStep(dir, entries);
    if (step.gitDir) found.push(dir);
    pending.push(...step.next);
  }
  return found;
}

/**
 * What tools run from under .forge/ stays readable (read-only): Python
 * environments (venv, venvs, python-venv...) and the compiled TS/JS tools of
 * a project run from sources (cache/). Everything else there is state.
 */
function revealedState(workDir: string): string[] {
  const state = join(workDir, '.forge');
  try {
    return readdirSync(state, { withFileTypes: true })
      .filter((e) => e.isDirectory() && (/venv|python/i.test(e.name) || e.name === 'cache'))
      .map((e) => join(state, e.name));
  } catch {
    return [];
  }
}
