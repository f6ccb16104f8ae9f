/** A TCP relay on loopback that can be taken down, to cut a process's connections the way a restart or failover does. */
import { createServer, connect, type Socket } from 'node:net';

/**
 * Relays to 127.0.0.1:`port`. down() cuts every relayed connection and drops new ones at once; stall()
 * stops passing bytes on every connection, new ones too, without closing any (a host gone silent, as
 * behind a network partition); up() lets new connections through again.
 */
export async function relay(port: number) {
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  let down = false;
  let stalled = false;
  let droppedAttempts = 0;
  const server = createServer((socket) => {
    if (down) {
      droppedAttempts++;
      return void socket.destroy();
    }
    if (stalled) {
      sockets.add(socket);
      socket.on('error', () => {});
      return void socket.pause();
    }
    const upstream = connect(port, '127.0.0.1');
    pairs.add([socket, upstream]);
    for (const s of [socket, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => (sockets.delete(s), socket.destroy(), upstream.destroy()));
    }
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    down() {
      down = true;
      for (const s of sockets) s.destroy();
    },
    stall() {
      stalled = true;
      for (const [socket, upstream] of pairs) {
        socket.unpipe(upstream);
        upstream.unpipe(socket);
        socket.pause();
        upstream.pause();
      }
      pairs.clear();
    },
    up() {
      down = false;
      stalled = false;
    },
    droppedAttempts: () => droppedAttempts,
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
