/**
 * What forge_tool takes (its input schema, recorded in agent.json) and what
 * it answers (a ForgeResult), and its settings from forge.yaml's
 * `emergent:`. The schemas are the source of truth; the types are derived from them.
 */
import type { ValidatedBy } from '../builtin/define.ts';

export const MAX_CODE_BYTES = 64 * 1024;
export const MAX_TEST_CASES = 50;
/**
 * Each schema as JSON text. ajv compiles a schema on the server's thread (at
 * the forge, and on each replica at the tool's first call): 800 kB of
 * properties took 4 s to check and 3.5 s to compile. A model's schema is a
 * few kilobytes; 64 KB compiles in about a tenth of a second.
 */
export const MAX_SCHEMA_CHARS = 64 * 1024;

/** forge_tool's arguments: what its input schema describes, after validation (scope defaults to "session"). */
export type ForgeRequest = ValidatedBy<typeof FORGE_REQUEST_SCHEMA>;
export type Implementation = ForgeRequest['implementation'];
export type ComposeStep = Extract<Implementation, { mode: 'compose' }>['steps'][number];
export type TestCase = ForgeRequest['testCases'][number];

export type { Tier } from './forged-mark.ts';
import type { Tier } from './forged-mark.ts';

export interface JudgeCheck {
  name: string;
  passed: boolean;
  detail?: string;
}

export interface TestResult {
  input: unknown;
  expected: unknown;
  actual?: unknown;
  passed: boolean;
  /** A unified diff of expected against actual (JSON, two-space indent). */
  diff?: string;
  /** Why the output does not fit outputSchema, or the error the tool returned. */
  error?: string;
  durationMs: number;
}

export interface ForgeResult {
  success: boolean;
  tool?: string;
  tier?: Tier;
  verdict: { approved: boolean; checks: JudgeCheck[]; reasoning: string };
  testResults: TestResult[];
  errors: { code: string; message: string; hint?: string }[];
}

/** forge.yaml's `emergent:` as forge_tool's config (defaults filled in by the schema). */
export type EmergentSettings = ValidatedBy<typeof EMERGENT_CONFIG_SCHEMA>;

export const EMERGENT_CONFIG_SCHEMA = {
  type: 'object',
  properties: {
    max_tools: { type: 'integer', minimum: 1, maximum: 1000, default: 20 },
    // Sandbox heap cap in MB.
    memory: { type: 'integer', minimum: 16, maximum: 4096, default: 64 },
    // Sandbox time cap per call, in seconds (as builtins' `timeout` configs are).
    timeout: { type: 'number', exclusiveMinimum: 0, maximum: 60, default: 5 },
    judge: { enum: ['deterministic', 'model'], default: 'deterministic' },
    // Tools a forged tool may compose or call (`tool:NAME`); empty: any tool of the agent but forge_tool.
    allow_tools: { type: 'array', items: { type: 'string' }, default: [] },
    // Forges per minute, per session.
    calls_per_minute: { type: 'integer', minimum: 1, maximum: 10000, default: 10 },
    // Whether a forge_tool call may register with `scope: agent`.
    allow_agent_scope: { type: 'boolean', default: false },
  },
  additionalProperties: false,
} as const;

const NAME = '^[a-zA-Z][a-zA-Z0-9_-]{0,63}$';

export const FORGE_REQUEST_SCHEMA = {
  type: 'object',
  required: ['name', 'description', 'inputSchema', 'outputSchema', 'implementation', 'testCases'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', pattern: NAME, description: 'The new tool\'s name (letters, digits, "_" and "-").' },
    description: { type: 'string', minLength: 1, maxLength: 2000, description: 'What the tool does, for the models that will choose it.' },
    inputSchema: { type: 'object', description: 'JSON Schema of the tool\'s arguments (type: object).' },
    outputSchema: { type: 'object', description: 'JSON Schema its results must validate against.' },
    implementation: {
      description: 'A composition of existing tools, or code run in a sandbox.',
      oneOf: [
        {
          type: 'object',
          required: ['mode', 'steps'],
          additionalProperties: false,
          properties: {
            mode: { const: 'compose' },
            steps: {
              type: 'array',
              minItems: 1,
              maxItems: 20,
              items: {
                type: 'object',
                required: ['tool'],
                additionalProperties: false,
                properties: {
                  tool: { type: 'string', description: 'An existing tool.' },
                  args: { type: 'object', description: 'Its arguments; strings are templates: {param}, {var.field}.' },
                  output_var: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'A name later steps and output use for this result.' },
                },
              },
            },
            output: { type: 'string', description: 'The result, as a template ({var} or {var.field}); default: the last step\'s result.' },
          },
        },
        {
          type: 'object',
          required: ['mode', 'code'],
          additionalProperties: false,
          properties: {
            mode: { const: 'sandbox' },
            code: { type: 'string', minLength: 1, description: 'JavaScript defining function execute(input) (may be async); it sees only input, tools.call(NAME, args) and fetch(URL) as the allowlist grants.' },
            allowlist: { type: 'array', items: { type: 'string', pattern: '^(tool|fetch):[^\\s]+$' }, description: 'tool:NAME lets the code call that tool; fetch:HOST lets it fetch from that host.' },
          },
        },
      ],
    },
    testCases: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_TEST_CASES,
      description: 'Binding test cases: each input must give exactly expectedOutput.',
      items: {
        type: 'object',
        required: ['input', 'expectedOutput'],
        additionalProperties: false,
        properties: { input: { type: 'object' }, expectedOutput: {} },
      },
    },
    scope: { enum: ['session', 'agent'], default: 'session', description: 'session: only this conversation or MCP session sees the tool; agent: every caller (where the policy allows).' },
  },
} as const;
