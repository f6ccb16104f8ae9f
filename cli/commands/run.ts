import { clientCalls } from '../../runtime/server/client-calls.ts';
import { sessionView } from '../../runtime/tools/emergent/session-view.ts';
import { agentModel, serveAgent, stopOnSignals } from '../../runtime/server/serve.ts';
import { routeConsoleToLog } from '../../runtime/server/sdk-console.ts';
import { publicUrlSetting } from '../../runtime/server/public-url.ts';
import { AuthConfigError } from '../../runtime/server/auth.ts';
import { codedLine, ForgeError } from '../../runtime/diagnostics.ts';
import { parseCommand, parseInteger } from '../args.ts';
import { logCall } from '../call-log.ts';
import { watchForChanges } from '../dev-reload.ts';
import { runLogger } from '../log-format.ts';
import { loadSourceAgent } from '../source-agent.ts';
import { UsageError } from '../usage-error.ts';
import { describeSandbox } from '../../runtime/exec/start-sandbox.ts';
import { color as c } from '../terminal.ts';
import { devStudio, studioLink } from '../studio/dev-studio.ts';

export const usage = `usage: forge run [--dev] [--port P] [--host H] [--no-auth] [--public-url URL]
                 [--log-format text|json] [--stdio] [--chat]

Serves the agent from the project's sources — the same server the built
bundle runs: A2A at /a2a (card at /.well-known/agent-card.json), MCP at
/mcp, REST at /tools, health at /healthz and /readyz.

options:
  --dev             include dev tools, reload changed tools without a restart,
                    log every tool call, and serve the studio at /studio
                    (on a loopback host; open the link it prints)
  --port P          port (default: server.port in forge.yaml, or 8080)
  --host H          host (default: server.host in forge.yaml, or 127.0.0.1)
  --no-auth         no bearer token (only on a loopback host)
  --public-url URL  the URL the agent card advertises (behind a proxy)
  --stdio           serve the tools over MCP on stdin/stdout instead
  --chat            talk to the agent in this terminal instead (same as forge chat)
  --log-format F    text (default: readable lines) or json (one object per line,
                    with trace_id and span_id; also FORGE_LOG_FORMAT)

examples:
  forge run --dev
  forge run --port 9000 --host 0.0.0.0
  forge run --stdio        # for desktop MCP clients
`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseRunCommand(argv);
  if (values.chat) return (await import('./chat.ts')).run(argv.filter((a) => a !== '--chat'));
  const port = parseInteger('port', values.port, 0, 65535);
  const log = runLogger(values['log-format'], values.verbose);
  if (!log.json) return serve(values, port, log);
  // With --log-format json every line is one JSON object: a failure to start too (a port in use, or a
  // setting serve refuses: --no-auth off loopback, a shared store without FORGE_PUBLIC_URL), not the CLI's
  // plain error. A refused setting keeps the usage error's exit code, 2.
  try {
    return await serve(values, port, log);
  } catch (err) {
    const coded = err instanceof ForgeError ? err : undefined;
    if (err instanceof AuthConfigError) {
      log.json.error(`forge run: ${err.message}`, coded);
      return 2;
    }
    if (err instanceof UsageError) throw err;
    // A failure with a code (a port in use) keeps it and its hint on the line, and as fields of their own.
    log.json.error(`forge run: ${coded ? codedLine(coded) : (err as Error).message}`, coded);
    log.debug((err as Error).stack ?? '');
    return 1;
  }
}

type RunValues = ReturnType<typeof parseRunCommand>['values'];

function parseRunCommand(argv: string[]) {
  return parseCommand(argv, {
    dev: { type: 'boolean', default: false },
    port: { type: 'string' },
    host: { type: 'string' },
    'no-auth': { type: 'boolean', default: false },
    'public-url': { type: 'string' },
    stdio: { type: 'boolean', default: false },
    chat: { type: 'boolean', default: false },
    'log-format': { type: 'string' },
  });
}

async function serve(values: RunValues, port: number | undefined, log: ReturnType<typeof runLogger>): Promise<number> {
  // The protocol SDKs' console lines (an A2A failure's stack) go through the log, in its format.
  routeConsoleToLog(log);
  const source = await loadSourceAgent({ configFile: values.config, dev: values.dev, log, json: values.json });
  if (!source) return 1;
  const { project, manifest, registry, http } = source;
  if (values.dev) registry.onCall((event) => logCall(log, event));
  // The same sandbox around every tool process as the built bundle's, installed as the agent loaded.
  if (!values.stdio) log.info(describeSandbox(source.sandbox));

  // Armed before the server answers, so no save after the first call is missed.
  const stopWatching = values.dev ? await watchForChanges(source, { configFile: values.config, log }) : () => {};
  if (values.stdio) {
    // Imported here: the MCP SDK (its transports bring undici, http2 and TLS; its schemas, zod) takes
    // tens of milliseconds to evaluate, and only --stdio serves through it.
    const { serveMcpStdio } = await import('../../runtime/server/mcp-stdio.ts');
    await serveMcpStdio(manifest, sessionView(clientCalls(registry, undefined, () => manifest.approval?.clients), 'stdio'), async () => {
      stopWatching();
      await registry.close();
    });
    return new Promise(() => {}); // runs until stdin closes
  }

  const host = values.host ?? project.config.server.host;
  const studio = devStudio({ dev: values.dev, host, agentId: manifest.agent_id, registry });
  // A save may change the model while the server makes its agent loop: it is checked once the loop is there.
  const modelAtStart = manifest.model;
  let running;
  try {
    running = await serveAgent({
      manifest,
      registry,
      workDir: project.config.workDir,
      host,
      port: port ?? project.config.server.port,
      noAuth: values['no-auth'],
      publicUrl: publicUrlSetting(values['public-url'], process.env),
      http,
      log,
      announce: (line) => (log.json ? log.json.shown(line) : process.stderr.write(`${c.yellow(line)}\n`)),
      extraRoutes: studio?.routes,
      beforeStop: () => (stopWatching(), studio?.close()),
    });
    source.loop = running.agent;
    if (manifest.model !== modelAtStart) running.agent.useModel(agentModel(manifest.model, { http, log }));
    studio?.attach(running.agent, running.token);
  } catch (err) {
    // Nothing is served: the watcher and the tool workers would keep the process running after its error.
    stopWatching();
    studio?.close();
    await registry.close();
    // A setting serve refuses: a usage error in text, a JSON line (run's catch) in json.
    if (err instanceof AuthConfigError && !log.json) throw new UsageError(err.message, err.hint, err.code);
    throw err;
  }
  // As the bundle's serve stops: FORGE_DRAIN_DELAY and FORGE_SHUTDOWN_GRACE hold here too (forge run serves replicas as well).
  stopOnSignals(running, log);
  if (log.json) {
    // The banner as one log line: a log shipper reading this process's output finds no plain text in it.
    // Shown as it is: the studio link carries the token.
    log.json.shown(`${manifest.agent_id} ${manifest.version}${values.dev ? ' (dev)' : ''} listening on ${running.url} (${registry.list().length} tools, ${manifest.model ? `model ${manifest.model.provider}:${manifest.model.name}` : 'no model'}; a2a ${running.url}/a2a, mcp ${running.url}/mcp, rest ${running.url}/tools${studio ? `, studio ${studioLink(running.url, running.token)}` : ''})`);
    return new Promise(() => {});
  }
  process.stdout.write(
    `${c.green('✓')} ${c.bold(manifest.agent_id)} ${manifest.version}${values.dev ? c.dim(' (dev)') : ''} on ${running.url}\n` +
      `  tools   ${registry.list().length}\n  model   ${manifest.model ? `${manifest.model.provider}:${manifest.model.name}` : c.dim('none (tools are served; message/send answers "no model configured")')}\n` +
      `  a2a     ${running.url}/a2a   mcp ${running.url}/mcp   rest ${running.url}/tools\n` +
      (studio ? `  studio  ${studioLink(running.url, running.token)}\n` : ''),
  );
  return new Promise(() => {}); // runs until a signal stops it
}
