import { doctor, formatDoctor } from '../../runtime/doctor.ts';
import { parseCommand } from '../args.ts';
import { loadProjectForCli } from '../project-loader.ts';

export const usage = `usage: forge doctor [--json]

Checks what this machine gives the agent's guards: the sandbox around tool
processes (bubblewrap: private PID namespace, read-only system, hidden
state), memory/CPU caps (prlimit), the work dir, where the auth token comes
from, and the model key. Exits 1 when forge.yaml says sandbox: required and
this machine cannot provide it. Outside a project, it checks with
forge.yaml's defaults. The built bundle has the same check:
node .forge-output/runtime.mjs doctor.
`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommand(argv, {});
  // Outside a project it checks the machine with forge.yaml's defaults (the work dir: here).
  const { project } = await loadProjectForCli(values.config, { strict: false, json: values.json ?? false, scopesOnly: values.config === undefined });
  if (!project) return 1;
  const { config } = project;
  const report = await doctor({ sandbox: config.sandbox, model: config.model }, config.workDir);
  process.stdout.write(values.json ? JSON.stringify(report, null, 2) + '\n' : formatDoctor(report));
  return report.ok ? 0 : 1;
}
