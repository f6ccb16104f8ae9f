/**
 * Turns tracing on for a serving process when the environment asks for it
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT): the
 * exporter module is imported only then. Returns what to call at shutdown.
 */
import type { Logger } from '../tools/model.ts';
import { configureTraceContent } from './trace-content.ts';
import { addSpanProcessor } from './tracer.ts';

export interface Telemetry {
  /** Sends what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

export async function setupTelemetry(env: NodeJS.ProcessEnv, service: { name: string; version?: string }, log: Logger): Promise<Telemetry> {
  configureTraceContent(env);
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return { shutdown: async () => {} };
  const { otlpSettings, startOtlpExporter } = await import('./otlp-exporter.ts');
  const settings = otlpSettings(env, { serviceName: service.name, serviceVersion: service.version });
  if (!settings) return { shutdown: async () => {} };
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol && protocol !== 'http/json') log.warn(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: Forge sends OTLP/HTTP with the JSON encoding (http/json), which collectors accept on the same endpoint`);
  const exporter = startOtlpExporter(settings, log);
  const remove = addSpanProcessor((span) => exporter.export(span));
  log.debug(`traces go to ${settings.url} as ${settings.resource['service.name']}`);
  return {
    async shutdown() {
      remove();
      await exporter.shutdown();
    },
  };
}
