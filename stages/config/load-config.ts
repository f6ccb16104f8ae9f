/**
 * Finds, parses and validates forge.yaml, and resolves it into a
 * ProjectConfig. Every problem is a diagnostic at file:line:column.
 */
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { error, hasErrors, type Diagnostic } from '../../runtime/diagnostics.ts';
import type { ModelSettings } from '../../runtime/manifest.ts';
import { DEFAULT_NODE_LINE, defaultBaseImage } from '../../runtime/node-lines.ts';
import forgeSchema from '../../schemas/forge.schema.json' with { type: 'json' };
import * as precompiled from './generated/forge-yaml-validator.mjs';
import { schemaValidator } from './schema-validator.ts';
import { resolveAdapterConfig } from './adapter-config.ts';
import { checkStateConfig } from './state-config.ts';
import { checkModelConfig } from './model-config.ts';
import { checkEgressConfig } from './egress-config.ts';
import { resolveSandboxConfig } from './sandbox-config.ts';
import type { ProjectConfig } from './project-config.ts';
import { schemaErrorsToDiagnostics } from './schema-errors.ts';
import { YamlSource } from './yaml-source.ts';
import { whyUnreadable } from '../../runtime/unreadable-file.ts';

export interface ConfigLoad {
  config?: ProjectConfig;
  diagnostics: Diagnostic[];
}

/** forge.yaml's validator: precompiled at install, compiled here only if the schema changed since. */
const forgeYamlValidator = schemaValidator(forgeSchema, precompiled);

const CONFIG_READ_HINT = "--config names the project's forge.yaml file; without it, Forge looks for forge.yaml in this directory and its parents";

export async function loadConfig(file: string, cwd = process.cwd()): Promise<ConfigLoad> {
  const displayFile = relative(cwd, file) || file;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return { diagnostics: [error('FORGE_CONFIG_READ', `cannot read ${displayFile}: ${whyUnreadable(err)}`, { file: displayFile }, CONFIG_READ_HINT)] };
  }
  return loadConfigText(file, text, cwd);
}

export async function loadConfigText(file: string, text: string, cwd = process.cwd()): Promise<ConfigLoad> {
  const displayFile = relative(cwd, file) || file;
  const { source, diagnostics } = YamlSource.parse(displayFile, text);
  if (hasErrors(diagnostics)) return { diagnostics };
  const data = source.toJS() as Record<string, unknown> | null;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    diagnostics.push(error('FORGE_CONFIG_SHAPE', `${displayFile} must be a mapping of fields`, source.locate([]), 'start with "agent_id: my-agent" and "version: 0.1.0"'));
    return { diagnostics };
  }
  const validate = await forgeYamlValidator();
  if (!validate(data)) {
    diagnostics.push(...schemaErrorsToDiagnostics(validate.errors ?? [], source, data));
    return { diagnostics };
  }
  const root = dirname(resolve(file));
  const model = data.model as ModelSettings | undefined;
  const toolDirs = ((data.tool_dirs as string[] | undefined) ?? ['tools']).map((path, i) => ({
    path,
    absolute: resolve(root, path),
    at: data.tool_dirs ? source.locate(['tool_dirs', i]) : source.locate([]),
    explicit: data.tool_dirs !== undefined,
  }));
  const tools = ((data.tools as unknown[] | undefined) ?? []).map((entry, i) =>
    typeof entry === 'string'
      ? { name: entry, at: source.locate(['tools', i]) }
      : {
          name: (entry as { name: string }).name,
          config: (entry as { config?: Record<string, unknown> }).config,
          at: source.locate(['tools', i, 'name']),
          configAt: (path: readonly (string | number)[], target?: 'value' | 'key') => source.locate(['tools', i, 'config', ...path], target),
        },
  );
  const egress = (data.egress ?? {}) as Partial<ProjectConfig['egress']>;
  const approval = (data.approval ?? {}) as Partial<ProjectConfig['approval']>;
  const server = (data.server ?? {}) as Partial<ProjectConfig['server']>;
  const adapters = resolveAdapterConfig(data, source, root);
  diagnostics.push(...adapters.diagnostics);

  const config: ProjectConfig = {
    file: resolve(file),
    displayFile,
    root,
    agentId: data.agent_id as string,
    version: data.version as string,
    description: (data.description as string | undefined) ?? '',
    model,
    workDir: resolve(root, (data.workdir as string | undefined) ?? '.'),
    workDirSetting: (data.workdir as string | undefined) ?? '.',
    sandbox: resolveSandboxConfig(data.sandbox as Parameters<typeof resolveSandboxConfig>[0], source, diagnostics),
    toolDirs,
    ignore: (data.ignore as string[] | undefined) ?? [],
    notSecrets: (data.not_secrets as string[] | undefined) ?? [],
    tools,
    envPassthrough: (data.env_passthrough as string[] | undefined) ?? [],
    strictOutputs: data.strict_outputs === true,
    egress: { mode: egress.mode ?? 'allowlist', allowed_domains: egress.allowed_domains ?? [], allowed_addresses: egress.allowed_addresses ?? [] },
    // When forge.yaml says nothing, read tools run on their own and everything else asks.
    approval: { auto_approve: approval.auto_approve ?? ['tag:read'], auto_deny: approval.auto_deny ?? [], ...(approval.clients ? { clients: approval.clients } : {}) },
    server: { port: server.port ?? 8080, host: server.host ?? '127.0.0.1' },
    metrics: data.metrics === 'public' ? 'public' : 'private',
    runtime: resolveRuntime(data.runtime as { node?: number; image?: string } | undefined),
    schedules: await readSchedules(data.schedules as RawSchedule[] | undefined, source, diagnostics),
    mcpServers: adapters.mcpServers,
    apis: adapters.apis,
    source,
  };
  if (typeof data.state === 'string') config.state = data.state;
  resolveEmergent(config, data.emergent, diagnostics);
  diagnostics.push(...checkEgressConfig(config.egress, source));
  diagnostics.push(...checkStateConfig(config.state, source));
  diagnostics.push(...checkModelConfig(config.model, source));
  if (hasErrors(diagnostics)) return { diagnostics };
  return { config, diagnostics };
}

/**
 * `emergent:` enables forge_tool, with the settings as its config. Listing
 * forge_tool under tools: is not the way in (the switch is one place).
 */
function resolveEmergent(config: ProjectConfig, raw: unknown, diagnostics: Diagnostic[]): void {
  const listed = config.tools.find((t) => t.name === 'forge_tool');
  if (listed) {
    diagnostics.push(error('FORGE_EMERGENT_SWITCH', 'forge_tool is enabled with `emergent: true` (or emergent: { ... } settings), not under tools:', listed.at, 'remove it from tools: and add emergent: true'));
    return;
  }
  if (raw === undefined || raw === false) return;
  const settings = raw === true ? {} : (raw as Record<string, unknown>);
  config.emergent = settings;
  const source = config.source;
  config.tools.push({ name: 'forge_tool', ...(Object.keys(settings).length ? { config: settings } : {}), at: source.locate(['emergent']), configAt: (path, target) => source.locate(['emergent', ...path], target) });
}

/** forge.yaml's `runtime:`: the active LTS line and its slim image unless it says otherwise. */
function resolveRuntime(raw: { node?: number; image?: string } | undefined): ProjectConfig['runtime'] {
  const node = raw?.node ?? DEFAULT_NODE_LINE;
  return { node, image: raw?.image ?? defaultBaseImage(node) };
}

type RawSchedule = { id: string; cron: string; task: string; timezone?: string };

/** forge.yaml's schedules, with each cron and time zone checked where it is written. */
async function readSchedules(raw: RawSchedule[] | undefined, source: YamlSource, diagnostics: Diagnostic[]): Promise<ProjectConfig['schedules']> {
  if (!raw?.length) return [];
  // croner loads only for projects that have schedules.
  const { parseSchedule } = await import('../../runtime/scheduler/schedule-expression.ts');
  const seen = new Map<string, number>();
  raw.forEach((schedule, i) => {
    const first = seen.get(schedule.id);
    if (first !== undefined) {
      const at = source.locate(['schedules', first, 'id']);
      diagnostics.push(error('FORGE_SCHEDULE_DUPLICATE', `schedule id "${schedule.id}" is used twice`, source.locate(['schedules', i, 'id']), `the first is at line ${at.line}`));
    } else seen.set(schedule.id, i);
    try {
      parseSchedule(schedule.cron, schedule.timezone);
    } catch (err) {
      const field = /time zone/.test((err as Error).message) ? 'timezone' : 'cron';
      diagnostics.push(error('FORGE_SCHEDULE_CRON', (err as Error).message, source.locate(['schedules', i, field]), (err as { hint?: string }).hint));
    }
  });
  return raw.map((s) => ({ id: s.id, cron: s.cron, task: s.task, ...(s.timezone ? { timezone: s.timezone } : {}), source: 'config' as const }));
}
