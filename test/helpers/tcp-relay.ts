/** A TCP relay on loopback that can be taken down, to cut a process's connections the way a restart or failover does. */
import { createServer, connect, type Socket } from 'node:net';

/** Relays to 127.0.0.1:`port`. down() cuts every relayed connection and drops new ones at once; up() lets them through again. */
export async function relay(port: number) {
  const sockets = new Set<Socket>();
  let down = false;
  let droppedAttempts = 0;
  const server = createServer((socket) => {
    if (down) {
      droppedAttempts++;
      return void socket.destroy();
    }
    const upstream = connect(port, '127.0.0.1');
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
    up() {
      down = false;
    },
    droppedAttempts: () => droppedAttempts,
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
