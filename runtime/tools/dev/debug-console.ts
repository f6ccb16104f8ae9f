import { defineBuiltin } from '../builtin/define.ts';
import { CATEGORIES, fail, ok } from '../model.ts';

export default defineBuiltin({
  spec: {
    name: 'debug_console',
    description: [
      'Development only: inspect the running agent. `summary` (default): tool counts per category and the last calls; `tools`: every tool you can call, with its category, tags and description; `calls`: your recent tool calls (this conversation\'s or session\'s), newest first, with duration, depth (0: called by the agent, 1+: by another tool), a preview of the arguments and the error of failed ones (optionally only `tool`, only `failed`); `config`: the agent\'s configuration (no secrets: keys are only named). Not available in production builds.',
    ].join('\n'),
    category: 'dev',
    tags: ['read'],
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        section: { enum: ['summary', 'tools', 'calls', 'config'], default: 'summary', description: 'What to show.' },
        tool: { type: 'string', minLength: 1, description: 'calls: only calls of this tool.' },
        failed: { type: 'boolean', default: false, description: 'calls: only failed calls.' },
        limit: { type: 'integer', minimum: 1, maximum: 200, default: 20, description: 'calls: most calls to show.' },
      },
    },
  },
  create(host) {
    return {
      async execute(args, ctx) {
        const { section, tool, failed, limit } = args;
        const agent = host.agent;
        if (!agent) return fail('FORGE_DEBUG_UNAVAILABLE', 'there is no running agent to inspect here', 'debug_console works inside `forge run --dev`, `forge tool run` and the bundle runtime');
        // A session is shown what it may call, and its own calls: another session's forged tools,
        // and what other sessions sent their tools (a forge's code and tests among it), are theirs.
        const tools = () => agent.tools(ctx.session);
        const own = () => agent.recentCalls().filter((c) => c.session === ctx.session);
        const calls = () =>
          own()
            .filter((c) => (!tool || c.name === tool) && (!failed || !c.ok))
            .slice(0, limit)
            .map(({ session: _own, ...call }) => call);
        switch (section) {
          case 'tools':
            return ok({ tools: tools().map(({ name, category, tags, description, composedOf }) => ({ name, category, tags, description, ...(composedOf ? { composedOf } : {}) })) });
          case 'calls':
            return ok({ calls: calls() });
          case 'config':
            return ok({ config: agent.config() });
          default: {
            const all = own();
            const callable = tools();
            return ok({
              tools: Object.fromEntries(CATEGORIES.map((c) => [c, callable.filter((t) => t.category === c).map((t) => t.name)])),
              calls: { recorded: all.length, failed: all.filter((c) => !c.ok).length, recent: calls() },
            });
          }
        }
      },
    };
  },
});
