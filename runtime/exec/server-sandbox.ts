/**
 * The sandbox a stdio MCP server starts in, when the tools' sandbox is
 * bubblewrap. A server is third-party code the developer chose, driven by
 * the model's calls (a shell server runs what it is asked): it gets the
 * host as the agent's user sees it — the file system writable where the
 * user may write, /tmp and /run the host's, the network as the agent has
 * it — but none of the agent's secrets: a private PID namespace (a fresh
 * /proc, where the agent's environment is not to be read), the state dir,
 * token and key files hidden as for tools (tool-sandbox.ts decides which),
 * and no capabilities but root's file ones (CAP_SYS_ADMIN would unmount
 * what hides them). It dies with the agent.
 *
 * Without bubblewrap (none installed, FORGE_SANDBOX=off, or bwrap refused
 * here: the fallback of mode auto) the server starts as it is.
 */
import { capabilityArgs, hidingArgs, type SandboxedCommand } from './sandbox.ts';
import { serverSandboxMounts } from './tool-sandbox.ts';

export function serverProcessCommand(command: string, args: readonly string[], cwd: string): SandboxedCommand {
  const mounts = serverSandboxMounts();
  if (!mounts) return { command, args: [...args] };
  const bwrapArgs = [
    '--die-with-parent',
    ...capabilityArgs(),
    '--unshare-pid',
    // No terminal of the agent's to push input into (TIOCSTI).
    '--new-session',
    '--bind', '/', '/',
    '--dev-bind', '/dev', '/dev',
    // /proc/sys read-only, as for tools: root may otherwise write the host kernel's settings.
    '--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys',
    ...hidingArgs(mounts.hidden, mounts.reveal),
    '--chdir', cwd,
  ];
  return { command: mounts.bwrap, args: [...bwrapArgs, '--', command, ...args] };
}
