/**
 * The baselines for the running bundle: a bare node:http server started as
 * its own process, answering at once. It answers a POST with a small JSON
 * result (the shape a tool result has), reading the body first as a real
 * handler must, so a round trip to it is the floor any tool call over HTTP
 * pays with the same client.
 */
import { spawn, type ChildProcess } from 'node:child_process';

const SOURCE = `
const http = require('node:http');
http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const text = JSON.stringify({ ok: true, value: { n: chunks.length } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
}).listen(Number(process.argv[1]), '127.0.0.1');
`;

export function startBareServer(port: number): ChildProcess {
  return spawn(process.execPath, ['-e', SOURCE, String(port)], { stdio: 'ignore' });
}
