import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { whyUnreadable } from '../../runtime/unreadable-file.js';

function readError(path: string): unknown {
  try {
    readFileSync(path);
  } catch (err) {
    return err;
  }
  throw new Error(`${path} was readable`);
}

describe('whyUnreadable', () => {
  const dirs: string[] = [];
  const servers: Server[] = [];
  afterEach(() => {
    for (const server of servers.splice(0)) server.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  function tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'forge-unreadable-'));
    dirs.push(dir);
    return dir;
  }

  it('says a listed errno in words, without the code or the path', () => {
    const dir = tempDir();
    expect(whyUnreadable(readError(join(dir, 'missing.json')))).toBe('there is no such file');
    expect(whyUnreadable(readError(dir))).toBe('it is a directory');
  });

  it("keeps Node's description of an errno it does not list, without the code before it or the path after it", async () => {
    // A setting that names a socket: reading it is ENXIO, which the table does not list.
    const socket = join(tempDir(), 'agent.sock');
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    const err = readError(socket) as NodeJS.ErrnoException;
    expect(err.code).toBe('ENXIO');
    const why = whyUnreadable(err);
    expect(why).toBe('no such device or address');
    expect(why).not.toContain(socket);
  });

  it('keeps a message that is not an errno message as it is, first line only', () => {
    expect(whyUnreadable(new Error('the bytes are not UTF-8\nat line 3'))).toBe('the bytes are not UTF-8');
    expect(whyUnreadable('plain words')).toBe('plain words');
  });
});
