import { describe, expect, it } from 'vitest';
import { MetricsRegistry } from '../../../runtime/telemetry/metrics-registry.ts';
import { formatTraceparent, parseTraceparent } from '../../../runtime/telemetry/trace-context.ts';

describe('MetricsRegistry', () => {
  it('renders counters, gauges and cumulative histogram buckets in the text format', () => {
    const m = new MetricsRegistry();
    const calls = m.counter('x_calls_total', 'Calls.', ['tool']);
    const inFlight = m.gauge('x_in_flight', 'Now.');
    const latency = m.histogram('x_seconds', 'Latency.', ['tool'], [0.1, 1]);
    calls.inc({ tool: 'a' });
    calls.inc({ tool: 'a' }, 2);
    inFlight.add({}, 1);
    latency.observe({ tool: 'a' }, 0.05);
    latency.observe({ tool: 'a' }, 0.5);
    latency.observe({ tool: 'a' }, 5);
    expect(m.render()).toBe(
      [
        '# HELP x_calls_total Calls.', '# TYPE x_calls_total counter', 'x_calls_total{tool="a"} 3',
        '# HELP x_in_flight Now.', '# TYPE x_in_flight gauge', 'x_in_flight 1',
        '# HELP x_seconds Latency.', '# TYPE x_seconds histogram',
        'x_seconds_bucket{tool="a",le="0.1"} 1', 'x_seconds_bucket{tool="a",le="1"} 2', 'x_seconds_bucket{tool="a",le="+Inf"} 3',
        'x_seconds_sum{tool="a"} 5.55', 'x_seconds_count{tool="a"} 3', '',
      ].join('\n'),
    );
  });

  it('keeps one series per combination of label values, in the order first seen', () => {
    const m = new MetricsRegistry();
    const calls = m.counter('z_total', 'Z.', ['tool', 'frontend', 'outcome']);
    const level = m.gauge('z_level', 'L.', ['a', 'b']);
    const latency = m.histogram('z_seconds', 'S.', ['tool', 'frontend'], [1]);
    calls.inc({ tool: 't', frontend: 'rest', outcome: 'ok' });
    calls.inc({ tool: 't', frontend: 'mcp', outcome: 'ok' });
    calls.inc({ tool: 't', frontend: 'rest', outcome: 'ok' }, 2);
    calls.inc({ tool: 't', frontend: 'rest' }); // a label left out is the empty value
    level.set({ a: 'x', b: '' }, 1);
    level.set({ a: '', b: 'x' }, 2); // the same values in other places: another series
    level.add({ a: 'x', b: '' }, 5);
    latency.observe({ tool: 'u', frontend: 'rest' }, 0.5);
    latency.observe({ tool: 'u', frontend: 'mcp' }, 2);
    expect(calls.get({ tool: 't', frontend: 'rest', outcome: 'ok' })).toBe(3);
    expect(calls.get({ tool: 't', frontend: 'a2a', outcome: 'ok' })).toBe(0); // read, never recorded: no series made
    expect(m.render().split('\n').filter((line) => !line.startsWith('#'))).toEqual([
      'z_total{tool="t",frontend="rest",outcome="ok"} 3',
      'z_total{tool="t",frontend="mcp",outcome="ok"} 1',
      'z_total{tool="t",frontend="rest",outcome=""} 1',
      'z_level{a="x",b=""} 6',
      'z_level{a="",b="x"} 2',
      'z_seconds_bucket{tool="u",frontend="rest",le="1"} 1',
      'z_seconds_bucket{tool="u",frontend="rest",le="+Inf"} 1',
      'z_seconds_sum{tool="u",frontend="rest"} 0.5',
      'z_seconds_count{tool="u",frontend="rest"} 1',
      'z_seconds_bucket{tool="u",frontend="mcp",le="1"} 0',
      'z_seconds_bucket{tool="u",frontend="mcp",le="+Inf"} 1',
      'z_seconds_sum{tool="u",frontend="mcp"} 2',
      'z_seconds_count{tool="u",frontend="mcp"} 1',
      '',
    ]);
  });

  it('escapes label values a tool name or an error could bring (quotes, backslashes, newlines)', () => {
    const m = new MetricsRegistry();
    m.counter('y_total', 'Y.', ['v']).inc({ v: 'a"b\\c\nd' });
    expect(m.render()).toContain('y_total{v="a\\"b\\\\c\\nd"} 1');
  });

  it('refuses a bad or duplicate metric name', () => {
    const m = new MetricsRegistry();
    expect(() => m.counter('bad-name', 'x')).toThrow(/bad metric name/);
    m.counter('ok_total', 'x');
    expect(() => m.counter('ok_total', 'x')).toThrow(/twice/);
  });
});

describe('traceparent', () => {
  it('reads a valid header and writes it back', () => {
    const header = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    expect(parseTraceparent(header)).toEqual({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', sampled: true });
    expect(formatTraceparent(parseTraceparent(header)!)).toBe(header);
  });

  it.each([
    ['all-zero trace id', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['all-zero span id', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'],
    ['short trace id', '00-4bf92f35-00f067aa0ba902b7-01'],
    ['unknown version', '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['garbage', 'hello'],
  ])('ignores a header with %s', (_what, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });
});
