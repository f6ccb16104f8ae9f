/**
 * `--log-format json`: one JSON object per line, with the trace and span
 * ids of the work that logged (a dev call log line carries the trace the
 * request came in with), for `forge run` and for the built bundle.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startAgentProcess } from '../helpers/agent-process.ts';
import { deployBundle, forge, forgeBin, minimalConfig, repoRoot, runProcess, writeProject } from '../helpers/project.ts';

const echo = '"""\nTool: echo\nDescription: Echo.\nTags: read\n\nInput:\n  message (str): The message.\n"""\n\ndef execute(args):\n    return args\n';
const TRACE = '0af7651916cd43dd8448eb211c80319c';

function jsonLines(output: string): Record<string, unknown>[] {
  return output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
}

/** Every line of `output`, each of which must be one JSON object (a plain line fails, naming itself). */
function everyLineJson(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`a line that is not JSON: ${JSON.stringify(line)}\nin:\n${output}`);
      }
    });
}

/** A port something already listens on, for as long as `body` runs. */
async function withPortTaken<T>(body: (port: number) => Promise<T>): Promise<T> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await body((server.address() as { port: number }).port);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/** A built bundle of a one-tool project: the project and where the bundle was deployed. */
async function builtBundle() {
  const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/echo.py': echo });
  expect((await forge(['build', '--prod'], project)).code).toBe(0);
  return { project, ...deployBundle(project) };
}

describe('--log-format json', () => {
  it('forge run --dev logs each tool call as JSON with the incoming trace id', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/echo.py': echo });
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth', '--log-format', 'json'], { cwd: project });
    try {
      const response = await fetch(`${agent.url}/tools/echo`, { method: 'POST', headers: { traceparent: `00-${TRACE}-b7ad6b7169203331-01`, 'content-type': 'application/json' }, body: '{"message":"hi"}' });
      expect(response.status).toBe(200);
      await agent.waitFor(/"msg":"tool echo/);
      const line = jsonLines(agent.output()).find((l) => String(l.msg).startsWith('tool echo'))!;
      expect(line).toMatchObject({ level: 'info', trace_id: TRACE });
      expect(line.span_id).toMatch(/^[0-9a-f]{16}$/);
      expect(new Date(String(line.time)).getTime()).not.toBeNaN();
    } finally {
      await agent.stop();
    }
  });

  it('the bundle logs JSON lines, and refuses an unknown format', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/echo.py': echo });
    expect((await forge(['build', '--prod'], project)).code).toBe(0);
    const { bundle, workDir } = deployBundle(project);
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0', '--log-format', 'json'], { cwd: workDir, env: { FORGE_AUTH_TOKEN: 'tok' } });
    try {
      const [listening] = jsonLines(agent.output()).filter((l) => String(l.msg).includes('listening on'));
      expect(listening).toMatchObject({ level: 'info' });
    } finally {
      await agent.stop();
    }
    const bad = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--log-format', 'xml'], { cwd: workDir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--log-format must be text or json');
    const badCli = await runProcess(process.execPath, [forgeBin, 'run', '--log-format', 'xml'], { cwd: project });
    expect(badCli.code).toBe(2);
    expect(badCli.stderr).toContain('--log-format must be text or json');
  }, 60_000);

  it("the bundle's serve writes nothing but JSON lines, from the first (the Node.js line's warning, the auth token's note) to the last, and its failure to start", async () => {
    const { bundle, workDir } = await builtBundle();
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0', '--log-format', 'json'], { cwd: workDir, env: { FORGE_AUTH_TOKEN: 'tok' } });
    expect(await agent.stop('SIGTERM')).toBe(0);
    const lines = everyLineJson(agent.output());
    expect(lines.map((l) => l.msg)).toContain('auth token: FORGE_AUTH_TOKEN');
    expect(lines.some((l) => String(l.msg).includes('listening on'))).toBe(true);
    // The last line says it stopped, once all is done, and how long the stop took.
    expect(lines.at(-1)).toEqual({ time: expect.any(String), level: 'info', msg: expect.stringMatching(/^stopped, \d+\.\d s after SIGTERM$/) });

    const taken = await withPortTaken((port) => runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', String(port), '--log-format', 'json'], { cwd: workDir, env: { FORGE_AUTH_TOKEN: 'tok' } }));
    expect(taken.code).toBe(1);
    const failure = everyLineJson(taken.stderr).find((l) => l.level === 'error');
    const listenFailure = /^forge runtime: FORGE_LISTEN cannot listen on 127\.0\.0\.1:\d+: another process is listening there \(stop that process, or choose another port: --port \d+\)$/;
    expect(String(failure?.msg)).toMatch(listenFailure);
    // The code and hint as fields of their own too, for a log pipeline to alert on.
    expect(failure).toMatchObject({ code: 'FORGE_LISTEN', hint: expect.stringMatching(/^stop that process, or choose another port: --port \d+$/) });
    // The README quotes that line as it is.
    const quoted = /`(\{"level":"error","msg":"forge runtime: [^`]*)`/.exec(readFileSync(join(repoRoot, 'README.md'), 'utf8'))?.[1];
    expect(JSON.parse(quoted ?? '{}')).toMatchObject({ msg: expect.stringMatching(listenFailure), code: 'FORGE_LISTEN', hint: expect.stringContaining('choose another port') });
  }, 60_000);

  it("forge run --dev writes nothing but JSON lines: its banner, the auth token's note, and its failure to start", async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/echo.py': echo });
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--log-format', 'json'], { cwd: project, env: { FORGE_AUTH_TOKEN: 'tok' } });
    expect(await agent.stop('SIGTERM')).toBe(0);
    const lines = everyLineJson(agent.output());
    expect(lines.map((l) => l.msg)).toContain('auth token: FORGE_AUTH_TOKEN');
    expect(lines.some((l) => /listening on http:.*studio http:/.test(String(l.msg)))).toBe(true);
    expect(lines.at(-1)).toMatchObject({ level: 'info', msg: expect.stringMatching(/^stopped, \d+\.\d s after SIGTERM$/) });

    const taken = await withPortTaken((port) => runProcess(process.execPath, [forgeBin, 'run', '--port', String(port), '--log-format', 'json'], { cwd: project, env: { FORGE_AUTH_TOKEN: 'tok' } }));
    expect(taken.code).toBe(1);
    expect(taken.stdout).toBe('');
    const failure = everyLineJson(taken.stderr).find((l) => l.level === 'error');
    expect(String(failure?.msg)).toMatch(/^forge run: FORGE_LISTEN cannot listen on 127\.0\.0\.1:\d+: another process is listening there \(stop that process, or choose another port: --port \d+\)$/);
    expect(failure).toMatchObject({ code: 'FORGE_LISTEN', hint: expect.stringMatching(/^stop that process, or choose another port: --port \d+$/) });
  }, 60_000);

  it('a setting serve refuses is a JSON line too (exit 2): --no-auth on a host that is not loopback, from FORGE_HOST or the command line, and an auth token file that is not there', async () => {
    const { project, bundle, workDir } = await builtBundle();
    const NO_AUTH = '--no-auth is only allowed on a loopback host (127.0.0.1, ::1, localhost), not 0.0.0.0';
    const refusals = [
      { what: 'the bundle, FORGE_HOST', run: () => runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0', '--no-auth', '--log-format', 'json'], { cwd: workDir, env: { FORGE_HOST: '0.0.0.0' } }), says: NO_AUTH },
      { what: 'forge run, --host', run: () => runProcess(process.execPath, [forgeBin, 'run', '--port', '0', '--no-auth', '--host', '0.0.0.0', '--log-format', 'json'], { cwd: project }), says: `forge run: ${NO_AUTH}` },
      { what: 'forge run, FORGE_AUTH_TOKEN_FILE', run: () => runProcess(process.execPath, [forgeBin, 'run', '--port', '0', '--log-format', 'json'], { cwd: project, env: { FORGE_AUTH_TOKEN_FILE: join(project, 'no-such-token') } }), says: 'forge run: FORGE_AUTH_TOKEN_FILE names' },
    ];
    for (const { what, run, says } of refusals) {
      const result = await run();
      expect(result.code, `${what}: ${result.stderr}`).toBe(2);
      expect(result.stdout, what).toBe('');
      const failure = everyLineJson(result.stderr).find((l) => l.level === 'error');
      expect(String(failure?.msg), what).toContain(says);
    }
    // In text, forge run's refusal stays a usage error, with its synopsis.
    const text = await runProcess(process.execPath, [forgeBin, 'run', '--port', '0', '--no-auth', '--host', '0.0.0.0'], { cwd: project });
    expect(text.code).toBe(2);
    expect(text.stderr).toContain(`error: FORGE_SERVE_CONFIG ${NO_AUTH}`);
    expect(text.stderr).toContain('usage: forge run');
  }, 90_000);
});

describe('the text log', () => {
  it("ends with the line saying the stop is done, and how long it took, after the bundle's own stop line", async () => {
    const { bundle, workDir } = await builtBundle();
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: workDir, env: { FORGE_AUTH_TOKEN: 'tok' } });
    expect(await agent.stop('SIGTERM')).toBe(0);
    const lines = agent.output().trimEnd().split('\n');
    expect(lines.slice(-2)).toEqual(['[forge] SIGTERM: finishing in-flight requests, then stopping', expect.stringMatching(/^\[forge\] stopped, \d+\.\d s after SIGTERM$/)]);
  }, 60_000);
});
