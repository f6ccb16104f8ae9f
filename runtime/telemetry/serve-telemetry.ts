/** What a serving agent does for telemetry: tool call spans from its registry, OTLP export when configured, schedule firings counted. */
import type { AgentManifest } from '../manifest.ts';
import type { Logger } from '../tools/model.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { scheduleFirings } from './forge-metrics.ts';
import { observeRegistry } from './instrument-tools.ts';
import { setupTelemetry, type Telemetry } from './setup.ts';

export async function startTelemetry(options: { manifest: AgentManifest; registry: ToolRegistry; env?: NodeJS.ProcessEnv; log: Logger }): Promise<Telemetry> {
  const stopObserving = observeRegistry(options.registry);
  const exporter = await setupTelemetry(options.env ?? process.env, { name: options.manifest.agent_id, version: options.manifest.version }, options.log);
  return {
    async shutdown() {
      stopObserving();
      await exporter.shutdown();
    },
  };
}

export function countFiring<T>(fire: (task: T) => Promise<void>): (task: T) => Promise<void> {
  return async (task) => {
    try {
      await fire(task);
      scheduleFirings.inc({ outcome: 'ok' });
    } catch (err) {
      scheduleFirings.inc({ outcome: 'error' });
      throw err;
    }
  };
}
