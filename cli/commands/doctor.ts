import { doctor, formatDoctor } from '../../runtime/doctor.ts';
import { doctorJson } from '../../runtime/doctor-json.ts';
import { jsonDocument, writeFailureJson } from '../../runtime/failure-json.ts';
import { parseCommand } from '../args.ts';
import { loadConfigForCli } from '../project-loader.ts';
import { printDiagnostics } from '../diagnostics-output.ts';
import { forgeDirProblems } from '../../stages/forge-env-dirs.ts';

export const usage = `usage: forge doctor [--json]

Checks what this machine gives the agent's guards: the sandbox around tool
processes (bubblewrap: private PID namespace, read-only system, hidden
state), memory/CPU caps (prlimit), the work dir, where the auth token comes
from and the model key; and what forge.yaml's MCP servers and APIs need
here: the environment variables their \${VAR} and auth: name, and each stdio
server's command (a problem shows its place in forge.yaml and the code the
agent would report). Exits 1 when something is missing that the agent
cannot start or call without (the sandbox forge.yaml requires, a required
server's variable or command, an API's auth variable, a model key file that
cannot be read). A model key that is not set is a warning here (forge chat
needs it; the tools and forge run do not), and a failure in the built
bundle's doctor, where the agent is deployed: node .forge-output/runtime.mjs
doctor. Outside a project, it checks with forge.yaml's defaults.
`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommand(argv, {});
  // forge.yaml only, resolved as the build resolves it: no tool discovery, and no MCP server started or
  // spec fetched (what the build would do), as the bundle's doctor starts none. Outside a project it checks
  // the machine with forge.yaml's defaults (the work dir: here).
  const { config, diagnostics: configDiagnostics } = await loadConfigForCli(values.config, { json: values.json, scopesOnly: values.config === undefined });
  // A FORGE_CACHE_DIR or FORGE_HOME that cannot be a directory: forge's own commands go on without it, so it is a warning here too.
  const machine = forgeDirProblems();
  if (!values.json) printDiagnostics(machine);
  const diagnostics = [...configDiagnostics, ...machine];
  if (!config) {
    // Without --json loadConfigForCli printed them.
    writeFailureJson(values.json, diagnostics);
    return 1;
  }
  // The adapters' checks as the bundle makes them, on forge.yaml's servers and APIs, each problem at its place in forge.yaml.
  const report = await doctor(
    { sandbox: config.sandbox, model: config.model, state: config.state, apis: config.apis, mcp: { servers: config.mcpServers } },
    config.workDir,
    process.env,
    // A model key not set is a warning here: this machine's key is not the deployment's (the bundle's doctor fails without it).
    { locate: (path) => config.source.locate(path), missingModelKey: 'warn' },
  );
  // forge.yaml's warnings, which text mode printed on stderr, are the document's too.
  process.stdout.write(values.json ? jsonDocument(doctorJson(report, diagnostics)) : formatDoctor(report));
  return report.ok ? 0 : 1;
}
