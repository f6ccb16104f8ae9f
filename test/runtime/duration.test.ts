/**
 * Durations longer than Node's timers hold (2^31 − 1 ms, about 24.8 days)
 * fire at once, with only a warning. Every place a person writes one
 * (forge.yaml, a docstring, a YAML tool, the environment) reads it as the
 * longest a timer holds: as good as never, not as none.
 */
import { describe, expect, it } from 'vitest';
import { MAX_TIMER_MS, parseDuration } from '../../runtime/duration.ts';
import { httpLimits } from '../../runtime/server/http-limits.ts';
import { stopTiming } from '../../runtime/server/lifecycle.ts';
import { otlpSettings } from '../../runtime/telemetry/otlp-exporter.ts';
import { loadConfigText } from '../../stages/config/load-config.ts';

describe('durations past what a timer holds', () => {
  it('are read as the longest a timer holds, and shorter ones as written', () => {
    expect(parseDuration('50000m')).toBe(MAX_TIMER_MS);
    expect(parseDuration(`${MAX_TIMER_MS}ms`)).toBe(MAX_TIMER_MS);
    expect(parseDuration('1.5m')).toBe(90_000);
  });

  it('hold from FORGE_HTTP_LIMITS, the shutdown variables and OpenTelemetry\'s', () => {
    const limits = httpLimits({}, { FORGE_HTTP_LIMITS: 'body=50000m,body_idle=50000m' });
    expect([limits.bodyTimeoutMs, limits.bodyIdleTimeoutMs]).toEqual([MAX_TIMER_MS, MAX_TIMER_MS]);
    expect(stopTiming({ FORGE_DRAIN_DELAY: '50000m', FORGE_SHUTDOWN_GRACE: '50000m' }, false)).toEqual({ drainMs: MAX_TIMER_MS, graceMs: MAX_TIMER_MS });
    const otlp = otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_BSP_SCHEDULE_DELAY: '3000000000', OTEL_EXPORTER_OTLP_TIMEOUT: '3000000000' }, { serviceName: 's' });
    expect([otlp?.delayMs, otlp?.timeoutMs]).toEqual([MAX_TIMER_MS, MAX_TIMER_MS]);
  });

  it('hold from forge.yaml, in seconds or with a unit', async () => {
    const { config, diagnostics } = await loadConfigText(
      '/project/forge.yaml',
      'agent_id: a\nversion: 1.0.0\nmcp:\n  servers:\n    - name: slow\n      transport: http\n      url: https://mcp.example.com/mcp\n      timeout: 50000m\n    - name: slower\n      transport: http\n      url: https://mcp.example.com/mcp\n      timeout: 3000000\n',
      '/project',
    );
    expect(diagnostics).toEqual([]);
    expect(config!.mcpServers.map((s) => s.timeout_ms)).toEqual([MAX_TIMER_MS, MAX_TIMER_MS]);
  });
});
