/**
 * Why a server could not listen, as a FORGE_LISTEN error a person can act on
 * (another port, another host), not Node's `listen EADDRINUSE: ...` and a stack.
 */
import { ForgeError } from '../diagnostics.ts';

export function listenFailure(err: NodeJS.ErrnoException, host: string, port: number): Error {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch (err.code) {
    case 'EADDRINUSE':
      return new ForgeError('FORGE_LISTEN', `cannot listen on ${where}: another process is listening there`, `stop that process, or choose another port: --port ${port === 65535 ? port - 1 : port + 1}`);
    case 'EACCES':
      return new ForgeError('FORGE_LISTEN', `cannot listen on ${where}: this user may not use port ${port}`, 'ports below 1024 need privileges: choose a port of 1024 or more with --port');
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ForgeError('FORGE_LISTEN', `cannot listen on ${where}: "${host}" is not an address of this machine`, 'use --host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every interface)');
    default:
      return err;
  }
}
