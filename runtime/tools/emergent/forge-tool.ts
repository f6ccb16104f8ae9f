/**
 * forge_tool: the agent forges a tool at run time — a composition of its
 * tools or code run in a sandbox — through build → test → judge →
 * register. Enabled by forge.yaml's `emergent:` (which becomes this tool's
 * config); tagged run, so under the default policy a person
 * approves each forge (`auto_approve: [name:forge_tool]` lifts that).
 */
import type { ModelSettings } from '../../manifest.ts';
import { defineBuiltin, type BuiltinHost } from '../builtin/define.ts';
import { ok, type ToolContext } from '../model.ts';
import type { ToolRegistry } from '../registry.ts';
import { buildStep, FORGE_TOOL_NAME, type ForgeProblem } from './build-step.ts';
import { ForgeQuota } from './forge-quota.ts';
import { EMERGENT_CONFIG_SCHEMA, FORGE_REQUEST_SCHEMA, type EmergentSettings, type ForgeRequest, type ForgeResult, type Tier } from './forge-request.ts';
import { watchActiveState } from '../../state/active-state.ts';
import { ForgedStore, forgedRoot } from './forged-store.ts';
import { ForgedSync } from './forged-sync.ts';
import { putInForce, settingsInForce } from './emergent-policy.ts';
import { CANDIDATE_OWNER, createForgedTool, type ForgedToolHost } from './forged-tool.ts';
import { deterministicChecks, modelReview, verdictOf } from './judge-step.ts';
import { discardCandidate, registerCandidate, registerForged, restoreForged } from './register-step.ts';
import { testStep } from './test-step.ts';

export default defineBuiltin({
  spec: {
    name: FORGE_TOOL_NAME,
    description:
      'Forge a new tool at run time: a composition of existing tools (mode "compose": steps of {tool, args, output_var} and an output template) or JavaScript run in a sandbox (mode "sandbox": code defining function execute(input), with an allowlist of tool:NAME and fetch:HOST). ' +
      'Every test case must give exactly its expectedOutput, which must also fit outputSchema; the tool is then judged and registered for this session (or the whole agent with scope: agent, where allowed) and can be called from the next turn on.',
    category: 'builtin',
    // run: forging runs code (the binding tests); a person approves it unless a rule says otherwise.
    tags: ['run', 'emergent'],
    inputSchema: FORGE_REQUEST_SCHEMA,
    // Up to 50 test cases, each under the sandbox's time cap (at most 60 s).
    timeoutMs: 600_000,
  },
  configSchema: EMERGENT_CONFIG_SCHEMA,
  create(host) {
    const registry = host.registry;
    const settings = host.config;
    const store = new ForgedStore(forgedRoot(host.workDir));
    const quota = new ForgeQuota(settings);
    // These settings hold every forged tool of the registry from now on, those made before too (emergent-policy.ts).
    if (registry) putInForce(registry, settings);
    const current = () => (registry ? settingsInForce(registry, settings) : settings);
    const toolHost = (name: string): ForgedToolHost => ({ workDir: host.workDir, http: host.http, limits: { memoryMb: settings.memory, timeoutMs: Math.round(settings.timeout * 1000) }, codeFile: store.codeFile(name), settings: current });
    // After the registry is filled (this runs inside its construction): stored tools come back, as these settings allow.
    if (registry) queueMicrotask(() => restoreForged(registry, store, toolHost, settings, host.log));
    // With a store replicas share, so do their forged tools: registered from it at start, when one is
    // added, and before a call names a tool this process does not have.
    const sync = registry ? new ForgedSync(registry, store, toolHost, host.log, current) : undefined;
    registry?.setLookup(() => sync!.refresh());
    const unwatch = sync ? watchActiveState((state) => sync.attach(state)) : undefined;

    return {
      async execute(args, ctx) {
        if (!registry) return ok(refused([{ code: 'FORGE_FORGE_UNAVAILABLE', message: 'forge_tool has no registry to add tools to here' }]));
        return ok(await forge(args, ctx, { registry, settings, store, quota, sync, toolHost, model: () => modelSettings(host.agent?.config()), modelClient: host.modelClient, http: host.http, env: host.env }));
      },
      async close() {
        unwatch?.();
        sync?.attach(undefined);
      },
    };
  },
});

interface ForgeDeps {
  registry: ToolRegistry;
  settings: EmergentSettings;
  store: ForgedStore;
  quota: ForgeQuota;
  /** Where replicas share their forged tools (absent, or not attached: this process keeps them alone). */
  sync?: ForgedSync;
  toolHost: (name: string) => ForgedToolHost;
  model: () => ModelSettings | undefined;
  modelClient?: BuiltinHost<unknown>['modelClient'];
  http: ForgedToolHost['http'];
  env: NodeJS.ProcessEnv;
}

export async function forge(request: ForgeRequest, ctx: ToolContext, deps: ForgeDeps): Promise<ForgeResult> {
  const { registry, settings, store, quota } = deps;
  const session = ctx.session;
  const tier: Tier = request.scope;
  if (tier === 'session' && !session) {
    return refused([{ code: 'FORGE_FORGE_NO_SESSION', message: 'this call comes from no conversation or MCP session, so a session-tier tool would be visible to no one', hint: 'forge over A2A or MCP, or pass scope: agent where the policy allows it' }]);
  }
  if (tier === 'agent' && !settings.allow_agent_scope) {
    return refused([{ code: 'FORGE_FORGE_SCOPE', message: 'scope: agent is not allowed by this agent\'s policy', hint: 'forge it for the session, then `forge tool promote NAME`; or set emergent.allow_agent_scope: true' }]);
  }
  const shared = deps.sync?.shared;
  // What the other replicas forged counts for the name, the visibility and max_tools checks below.
  await deps.sync?.refresh();
  const overRate = shared ? await shared.takeCall(session ?? 'agent', settings.calls_per_minute) : quota.takeCall(session ?? 'agent');
  if (overRate) return refused([{ code: 'FORGE_FORGE_QUOTA', message: overRate, hint: 'wait a minute' }]);
  const full = quota.roomFor(registry, session);
  if (full) return refused([{ code: 'FORGE_FORGE_QUOTA', message: full, hint: 'remove forged tools with `forge tool forged remove NAME`' }]);

  // Build.
  const problems = buildStep(request, registry, settings, session);
  if (problems.length) return refused(problems);
  // A tool kept in the store that is not served (emergent.allow_tools or max_tools left it out) still holds its name:
  // the candidate's code would be staged over its code.js, and a refused forge left it there, under the kept record,
  // to be served without build, tests or judge once the settings let that record in again. Answered as any taken name.
  if (store.holds(request.name)) return refused([{ code: 'FORGE_TOOL_COLLISION', message: `a tool named "${request.name}" already exists`, hint: 'choose another name' }]);
  let tool;
  try {
    tool = createForgedTool(request, { tier: 'session', owner: CANDIDATE_OWNER }, deps.toolHost(request.name));
  } catch (err) {
    return refused([{ code: 'FORGE_COMPOSE_INVALID', message: (err as Error).message }]);
  }
  if (request.implementation.mode === 'sandbox') store.stageCode(request.name, request.implementation.code);
  const collision = registerCandidate(registry, tool);
  if (collision) return refused([{ code: 'FORGE_TOOL_COLLISION', message: collision }]);

  try {
    // Test (binding), with the caller's session so compositions reach its session tools.
    const testResults = await testStep(request, registry, { signal: ctx.signal, ...(session ? { session } : {}) });
    // Judge.
    const checks = deterministicChecks(request, testResults, settings.timeout * 1000);
    let review;
    if (settings.judge === 'model' && checks.every((c) => c.passed)) {
      const model = deps.model();
      if (!model) review = { approved: false, reasoning: 'judge: model is set, and the agent has no model' };
      else {
        review = await (deps.modelClient ? deps.modelClient(model).then((client) => modelReview(client, request, ctx.signal)) : Promise.reject(new Error('this runtime makes no model clients'))).catch((err: Error) => ({ approved: false, reasoning: `the model could not review: ${err.message}` }));
      }
    }
    const verdict = verdictOf(checks, review);
    if (!verdict.approved) {
      await discardCandidate(registry, tool);
      store.removeUnrecorded(request.name);
      const failedTests = testResults.filter((t) => !t.passed).length;
      const errors = failedTests
        ? [{ code: 'FORGE_FORGE_TEST_FAILED', message: `${failedTests} of ${testResults.length} test cases failed: see testResults for input, expected, actual and diff` }]
        : [{ code: 'FORGE_FORGE_REFUSED', message: verdict.reasoning }];
      return { success: false, tool: request.name, verdict, testResults, errors };
    }
    // Register.
    const owner = tier === 'session' ? session : undefined;
    const record = { request: { ...request, scope: tier }, tier, ...(owner ? { owner } : {}), forgedAt: new Date().toISOString(), verdict, testResults };
    // Shared first: a tool the other replicas cannot have (its name taken there meanwhile, max_tools reached) is not kept here either.
    const refusal = shared ? await shared.add(record, settings.max_tools) : undefined;
    if (refusal) {
      await discardCandidate(registry, tool);
      store.removeUnrecorded(request.name);
      return { success: false, tool: request.name, verdict, testResults, errors: [refusal.code === 'FORGE_TOOL_COLLISION' ? { ...refusal, hint: 'forge it under another name' } : { ...refusal, hint: 'emergent.max_tools counts the tools forged on every replica (kept in the state store)' }] };
    }
    registerForged(registry, store, tool, record);
    return { success: true, tool: request.name, tier, verdict, testResults, errors: [] };
  } catch (err) {
    await discardCandidate(registry, tool);
    store.removeUnrecorded(request.name);
    return refused([{ code: 'FORGE_FORGE_FAILED', message: (err as Error).message }]);
  }
}

function refused(errors: ForgeProblem[]): ForgeResult {
  return { success: false, verdict: { approved: false, checks: [], reasoning: 'the request did not build' }, testResults: [], errors };
}

function modelSettings(config: unknown): ModelSettings | undefined {
  return (config as { model?: ModelSettings } | undefined)?.model;
}
