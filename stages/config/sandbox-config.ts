/**
 * forge.yaml's `sandbox:` resolved into what agent.json records: the mode,
 * and memory (bytes) / CPU (seconds) / processes / network settings, as defaults and per
 * tool. `sandbox: required` is short for `sandbox: { mode: required }`.
 */
import { error, type Diagnostic } from '../../runtime/diagnostics.ts';
import { parseByteSize } from '../../runtime/exec/byte-size.ts';
import type { SandboxSettings, ToolLimits } from '../../runtime/exec/tool-sandbox.ts';
import { parseDuration } from '../../runtime/duration.ts';
import type { YamlSource } from './yaml-source.ts';

type RawLimits = { memory?: string | number; cpu?: string | number; processes?: number; network?: boolean };
type RawSandbox = string | (RawLimits & { mode?: SandboxSettings['mode']; visible?: string[]; tools?: Record<string, RawLimits> });

export function resolveSandboxConfig(raw: RawSandbox | undefined, source: YamlSource, diagnostics: Diagnostic[]): SandboxSettings {
  if (raw === undefined) return { mode: 'auto' };
  if (typeof raw === 'string') return { mode: raw as SandboxSettings['mode'] };
  const settings: SandboxSettings = { mode: raw.mode ?? 'auto', ...limits(raw, ['sandbox'], source, diagnostics), ...(raw.visible?.length ? { visible: raw.visible } : {}) };
  if (raw.tools) {
    settings.tools = Object.fromEntries(Object.entries(raw.tools).map(([name, tool]) => [name, limits(tool, ['sandbox', 'tools', name], source, diagnostics)]));
  }
  return settings;
}

function limits(raw: RawLimits, at: (string | number)[], source: YamlSource, diagnostics: Diagnostic[]): ToolLimits {
  const out: ToolLimits = {};
  if (raw.memory !== undefined) {
    const bytes = parseByteSize(raw.memory);
    if (bytes === undefined || bytes < 16 * 1024 * 1024) {
      diagnostics.push(error('FORGE_SANDBOX_MEMORY', `memory "${raw.memory}" is not a usable cap`, source.locate([...at, 'memory']), 'write a size of at least 16MB, such as 512MB or 1GiB'));
    } else out.memory_bytes = bytes;
  }
  if (raw.cpu !== undefined) {
    const ms = typeof raw.cpu === 'number' || /^\s*\d+(\.\d+)?\s*$/.test(raw.cpu) ? Number(raw.cpu) * 1000 : parseDuration(raw.cpu);
    if (ms === undefined || ms < 1000) diagnostics.push(error('FORGE_SANDBOX_CPU', `cpu "${raw.cpu}" is not a usable cap`, source.locate([...at, 'cpu']), 'write at least 1s, such as 30s or 2m'));
    else out.cpu_seconds = Math.ceil(ms / 1000);
  }
  // At least 32, whole: the schema says so (forge.schema.json's processCount).
  if (raw.processes !== undefined) out.processes = raw.processes;
  if (raw.network !== undefined) out.network = raw.network;
  return out;
}
