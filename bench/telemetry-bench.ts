/**
 * What telemetry costs a builtin call (uuid_generate through the registry,
 * the way every front end calls it), against a baseline in the same run:
 *
 *   baseline      registry.execute alone (no telemetry hook: the call as it was)
 *   tracing off   through clientCalls: the tool-call hook and its metrics, no span processor
 *   tracing on    the same with the OTLP exporter on (batched to a loopback receiver)
 *
 * and the bundle's start with tracing off and on. Run alone with
 * `npx tsx bench/telemetry-bench.ts`, or as part of `npm run bench`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { HttpClient } from '../runtime/net/http-client.ts';
import { clientCalls } from '../runtime/server/client-calls.ts';
import { addSpanProcessor } from '../runtime/telemetry/tracer.ts';
import { observeRegistry } from '../runtime/telemetry/instrument-tools.ts';
import uuidGenerate from '../runtime/tools/builtin/uuid-generate.ts';
import { instantiateBuiltin } from '../runtime/tools/builtin/define.ts';
import { silentLogger, ToolRegistry } from '../runtime/tools/registry.ts';
import { median, printRows, type BenchRow } from './measure.ts';

const CALLS = 5_000;
const ROUNDS = 9;

async function perCall(call: () => Promise<unknown>, calls = CALLS): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < calls; i++) await call();
  return (performance.now() - started) / calls;
}

/** Rounds of `a` and `b` taken in turn, so that drift on a shared machine hits both alike; medians. */
async function interleaved(a: () => Promise<unknown>, b: () => Promise<unknown>, between: [() => void, () => void] = [() => {}, () => {}]): Promise<[number, number]> {
  const as: number[] = [];
  const bs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    between[0]();
    as.push(await perCall(a));
    between[1]();
    bs.push(await perCall(b));
  }
  return [median(as), median(bs)];
}

export async function benchTelemetry(): Promise<BenchRow[]> {
  const registry = new ToolRegistry({ workDir: process.cwd() });
  registry.register(instantiateBuiltin(uuidGenerate, { ...uuidGenerate.spec, tags: [...uuidGenerate.spec.tags] } as never, { workDir: process.cwd(), log: silentLogger, http: new HttpClient(), env: {} }), 'builtin');
  observeRegistry(registry);
  const front = clientCalls(registry);
  const direct = () => registry.execute('uuid_generate', {}, { approved: true });
  const hooked = () => front.execute('uuid_generate', {});
  await perCall(direct, 3000); // warm up (JIT, ajv's compiled validator)
  await perCall(hooked, 3000);

  // Tracing off, as a process that never configured it runs (no async context ever made).
  const [baseline, off] = await interleaved(direct, hooked);

  // Tracing on: the OTLP exporter to a loopback receiver, its processor switched off and on between rounds.
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('{}'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const { otlpSettings, startOtlpExporter } = await import('../runtime/telemetry/otlp-exporter.ts');
  const exporter = startOtlpExporter(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '200' }, { serviceName: 'bench' })!, silentLogger);
  let remove = () => {};
  const [offAgain, on] = await interleaved(hooked, hooked, [() => remove(), () => (remove = addSpanProcessor((span) => exporter.export(span)))]);
  remove();
  await exporter.shutdown();
  receiver.close();

  const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
  return [
    { measure: 'builtin call, bare registry', result: us(baseline), against: `median of ${ROUNDS} rounds of ${CALLS} calls` },
    { measure: 'builtin call, tracing off', result: us(off), ratio: off / baseline, against: 'the bare registry (the hook and its metrics; within noise)', goal: 1.2 },
    { measure: 'builtin call, tracing on (OTLP)', result: `+${us(Math.max(on - offAgain, 0))}`, absolute: on - offAgain, against: `tracing off in the same rounds (${us(offAgain)})`, goal: 0.1 },
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = printRows(await benchTelemetry()) ? 0 : 1;
}
