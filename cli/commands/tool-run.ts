import { parseCommand, parseInteger } from '../args.ts';
import { parseParams } from '../param-values.ts';
import { diagnosticsJson, loadProjectForCli } from '../project-loader.ts';
import { createSourceRegistry } from '../../stages/source-registry.ts';
import { printDiagnostics } from '../diagnostics-output.ts';
import { color as c, errColor, formatMs } from '../terminal.ts';
import { UsageError } from '../usage-error.ts';

export const usage = `usage: forge tool run NAME [--param K=V ...] [--input JSON] [--timeout MS] [--json]

Runs one tool from the project's sources — no build, no LLM — with the same
argument checks, environment and timeout the agent's runtime applies.

options:
  --param K=V     an argument; the value is converted to the parameter's type
                  (numbers, true/false, a,b,c or JSON for lists, JSON for objects)
  --input JSON    all arguments as one JSON object (--param values win)
  --timeout MS    stop the tool after this many milliseconds
  --json          print the whole result as JSON

examples:
  forge tool run word_count --param text="the quick brown fox"
  forge tool run uuid_generate --input '{"version": 7, "count": 3}'
`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(argv, {
    param: { type: 'string', short: 'p', multiple: true },
    input: { type: 'string' },
    timeout: { type: 'string' },
  });
  const name = positionals[0];
  if (!name) throw new UsageError('missing tool name');
  const timeoutMs = parseInteger('timeout', values.timeout);
  let input: Record<string, unknown> = {};
  if (values.input !== undefined) {
    try {
      input = JSON.parse(values.input) as Record<string, unknown>;
    } catch (err) {
      throw new UsageError(`--input is not valid JSON: ${(err as Error).message}`);
    }
    if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new UsageError('--input must be a JSON object');
  }

  const { project, diagnostics } = await loadProjectForCli(values.config, { strict: false, json: values.json });
  if (!project) {
    if (values.json) process.stdout.write(JSON.stringify({ ok: false, ...diagnosticsJson(diagnostics) }, null, 2) + '\n');
    return 1;
  }
  // Tools report problems found when they start (an allowed binary not installed) as warnings.
  const log = { debug() {}, info() {}, warn: (message: string) => process.stderr.write(`${errColor.yellow('warning:')} ${message}\n`) };
  const { registry, diagnostics: registryProblems } = createSourceRegistry(project, { log });
  if (!values.json) printDiagnostics(registryProblems);
  try {
    const tool = registry.get(name);
    const args = { ...input, ...(tool ? parseParams(values.param ?? [], tool.inputSchema) : {}) };
    const result = await registry.execute(name, args, { timeoutMs });
    if (values.json) {
      process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    } else if (result.ok) {
      process.stdout.write((typeof result.value === 'string' ? result.value : JSON.stringify(result.value, null, 2)) + '\n');
      if (values.verbose) process.stderr.write(c.dim(`${name} finished in ${formatMs(result.durationMs ?? 0)}\n`));
    } else {
      const e = result.error;
      process.stderr.write(`${errColor.red('✘')} ${errColor.dim(e.code)} ${e.message}\n`);
      if (e.hint) process.stderr.write(`  ${errColor.cyan('hint:')} ${e.hint}\n`);
      if (values.verbose && e.details) process.stderr.write(`${errColor.dim(e.details)}\n`);
    }
    return result.ok ? 0 : 1;
  } finally {
    await registry.close();
  }
}
