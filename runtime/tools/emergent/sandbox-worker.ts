/**
 * The program a forged tool's sandbox process runs (`node -e`), as text:
 * the process starts under Node's permission model with read access to the
 * tool's code file only, so it cannot load anything else — the worker is
 * self-contained and uses Node's builtin modules alone.
 *
 * Two layers: the process has nothing to leak (no write, no child process,
 * no worker, no environment, no network for the code), and the code runs
 * in a `vm` context that never sees a host object. The input arrives as
 * JSON text and is parsed inside the context; the bridge (`tools.call`,
 * `fetch`) is made inside the context and hands the host only strings, and
 * answers with strings parsed inside the context again. So
 * `constructor.constructor('return process')()` reaches the context's own
 * Function — which may not compile strings — and never the host's.
 *
 * Protocol (one JSON line each way, on stdin/stdout):
 *   → {"id":1,"input":"<json>"}                   run execute(input)
 *   ← {"id":1,"ok":true,"output":"<json>"}        or {"id":1,"ok":false,"error":"..."}
 *   ← {"id":1,"bridge":7,"kind":"tool"|"fetch","request":"<json>"}
 *   → {"bridge":7,"ok":true,"value":"<json>"}     or {"bridge":7,"ok":false,"error":"..."}
 */

/** Longest result (JSON characters) a forged tool may return; past it the call fails. */
export const MAX_RESULT_CHARS = 1024 * 1024;

export const SANDBOX_WORKER_SOURCE = String.raw`
'use strict';
const vm = require('node:vm');
const fs = require('node:fs');
const readline = require('node:readline');
const MAX_RESULT_CHARS = ${MAX_RESULT_CHARS};
const [codeFile, allowJson] = process.argv.slice(1);
const allow = JSON.parse(allowJson);
const out = process.stdout.write.bind(process.stdout);
const send = (m) => out(JSON.stringify(m) + '\n');
// Nothing the code could reach should offer a way out, even if it got here.
for (const name of ['fetch', 'WebSocket', 'EventSource', 'XMLHttpRequest']) { try { delete globalThis[name]; } catch {} }
console.log = console.info = console.warn = console.error = () => {};
process.stdout.write = () => true;

const code = fs.readFileSync(codeFile, 'utf8');
const context = vm.createContext(Object.create(null), { name: 'forged-tool', codeGeneration: { strings: false, wasm: false } });
let nextBridge = 1;
const bridgeWaits = new Map();
let currentId = 0;
// The host side of the bridge: takes and gives strings only. The code calls it on its own stack, which
// it may have filled to the brim: it only queues the request (nothing is half done if it overflows,
// and the context drops what it throws), and the queue is written out on a stack of its own.
const outbox = [];
let flushing = false;
function flush() {
  flushing = false;
  // A request whose wait was never recorded (the stack ran out in between) is not sent: the code was told it failed.
  for (const message of outbox.splice(0)) if (bridgeWaits.has(message.bridge)) send(message);
}
function bridge(kind, requestJson, settle) {
  // Each try takes a number of its own, so no later request is sent under one that was queued and not waited for.
  const message = { id: currentId, bridge: nextBridge++, kind, request: String(requestJson) };
  if (!flushing) {
    setImmediate(flush);
    flushing = true;
  }
  outbox.push(message);
  bridgeWaits.set(message.bridge, settle);
}
const makeApi = vm.runInContext(
  '(function (bridge, allowJson) {' +
  '  "use strict";' +
  '  const allow = JSON.parse(allowJson);' +
  // What the host's function throws (its stack overflowing: a RangeError of the host's realm) never reaches the code.
  '  const ask = (kind, request) => new Promise((resolve, reject) => { const text = JSON.stringify(request); try { bridge(kind, text, (ok, answer) => ok ? resolve(JSON.parse(answer)) : reject(new Error(String(answer)))); } catch { reject(new Error("the call could not be made: the stack is full")); } });' +
  '  const tools = Object.freeze({ call: (name, args) => {' +
  '    if (!allow.tools.includes(String(name))) return Promise.reject(new Error("tool \\"" + name + "\\" is not in the allowlist (allowed: " + (allow.tools.join(", ") || "none") + ")"));' +
  '    return ask("tool", { name: String(name), args: args === undefined ? {} : args });' +
  '  } });' +
  '  const fetchText = (url, init) => ask("fetch", { url: String(url), method: init && init.method ? String(init.method) : "GET", headers: init && init.headers ? init.headers : {}, body: init && init.body !== undefined ? String(init.body) : undefined });' +
  '  return Object.freeze({ tools, fetch: fetchText });' +
  '})',
  context,
);
const api = makeApi(bridge, JSON.stringify(allow));
vm.runInContext('(function (api) { "use strict"; globalThis.tools = api.tools; globalThis.fetch = api.fetch; })', context)(api);
let loadError;
try {
  new vm.Script(code, { filename: 'forged-tool.js' }).runInContext(context, { timeout: 5000 });
  if (vm.runInContext('typeof execute', context) !== 'function') loadError = 'the code defines no function execute(input)';
} catch (err) {
  loadError = 'the code does not load: ' + String(err && err.message || err);
}
const run = vm.runInContext(
  '(async function (inputJson) { "use strict"; const output = await execute(JSON.parse(inputJson)); return output === undefined ? "null" : JSON.stringify(output); })',
  context,
);

let chain = Promise.resolve();
const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  if (!line.trim()) return;
  const message = JSON.parse(line);
  if (message.bridge !== undefined) {
    const settle = bridgeWaits.get(message.bridge);
    bridgeWaits.delete(message.bridge);
    if (settle) settle(message.ok === true, message.ok === true ? message.value : message.error);
    return;
  }
  chain = chain.then(() => handle(message));
});
lines.on('close', () => process.exit(0));

async function handle(message) {
  currentId = message.id;
  if (loadError) return send({ id: message.id, ok: false, error: loadError });
  try {
    const output = await run(String(message.input));
    if (typeof output !== 'string') return send({ id: message.id, ok: false, error: 'the result is not JSON' });
    if (output.length > MAX_RESULT_CHARS) return send({ id: message.id, ok: false, cap: 'output', error: 'the result is ' + output.length + ' characters of JSON; the limit is ' + MAX_RESULT_CHARS });
    send({ id: message.id, ok: true, output });
  } catch (err) {
    let text;
    try { text = String(err && err.message !== undefined ? err.message : err); } catch { text = 'the code threw something that cannot be shown'; }
    send({ id: message.id, ok: false, error: text.slice(0, 2000) });
  }
}
`;
