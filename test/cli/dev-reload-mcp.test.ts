/**
 * `forge run --dev` hot reload and forge.yaml's `mcp:` section, with the real
 * filesystem MCP server: a server added to a project that had none at start
 * is connected and its tools answer, without a restart; one removed takes
 * its tools with it (and its process stops); a save that leaves the servers
 * as they were keeps their processes; a reload that fails after connecting
 * the new set still stops the old servers, and the next save connects again.
 * A tool the reload retires does not close the connections the other tools of
 * its server share: a call in flight on one of them finishes, and the old
 * servers stop once their calls are done (or when the agent shuts down).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { watchForChanges, type ReloadReport } from '../../cli/dev-reload.ts';
import { loadSourceAgent } from '../../cli/source-agent.ts';
import { serveAgent } from '../../runtime/server/serve.ts';
import { toSpec, type Tool } from '../../runtime/tools/model.ts';
import { startAgentProcess } from '../helpers/agent-process.ts';
import { filesystemServerScript } from '../helpers/mcp-servers.ts';
import { forgeBin, minimalConfig, writeProject } from '../helpers/project.ts';

const yamlTool = 'name: plain\ndescription: Echo a word.\ntags: [read]\nsteps:\n  - run: echo plain\n';
const withFilesystem = (dir: string) =>
  minimalConfig(`mcp:\n  servers:\n    - name: fs\n      transport: stdio\n      command: ${JSON.stringify(process.execPath)}\n      args: [${JSON.stringify(filesystemServerScript)}, ${JSON.stringify(dir)}]\n      tools: { allow: [read_text_file, list_directory] }\n`);

const post = async (url: string, tool: string, args: unknown = {}) => {
  const res = await fetch(`${url}/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args) });
  return { status: res.status, body: (await res.json()) as any };
};
/** Processes whose command line names `dir` (the filesystem server started for it). */
const serversFor = (dir: string): number[] =>
  readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((pid) => {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      // The server itself, not the bwrap processes its sandbox starts it through (their argv holds its command line).
      return argv.includes(dir) && argv.some((a) => a.endsWith('server-filesystem/dist/index.js')) && !argv[0].endsWith('bwrap');
    } catch {
      return false; // gone meanwhile
    }
  }).map(Number);

async function until(probe: () => boolean, what: string, output: () => string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; server output:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
/**
 * A named pipe in `dir`: the filesystem server's read of it blocks until the test writes and closes it, so a
 * call is held in flight on the server for as long as the test needs, with no clock involved.
 */
function heldFile(dir: string) {
  const path = join(dir, 'held.txt');
  execFileSync('mkfifo', [path]);
  let fd: number | undefined;
  return {
    path,
    /** Resolves once the server has opened the pipe to read it: the call is running on the server. */
    reading: (output: () => string) =>
      until(() => {
        try {
          fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
          return true;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENXIO') return false; // no reader yet
          throw err;
        }
      }, 'the server to read the pipe', output),
    /** Ends the read with `text`. The reader may be gone (its server stopped): then the write fails, as it may. */
    release(text: string) {
      if (fd === undefined) return;
      try {
        writeSync(fd, text);
      } catch {
        /* no reader left */
      }
      closeSync(fd);
      fd = undefined;
    },
  };
}
/** A logger that keeps its lines, for the in-process agents. */
function lineLog() {
  const lines: string[] = [];
  const log = { debug: () => {}, info: (m: string) => void lines.push(m), warn: (m: string) => void lines.push(m) };
  return { log, output: () => lines.join('\n') };
}
const names = async (url: string): Promise<string[]> => ((await (await fetch(`${url}/tools`)).json()) as { tools: { name: string }[] }).tools.map((t) => t.name);

describe('forge run --dev and MCP servers in forge.yaml', () => {
  it('connects a server added while it runs (the project had none at start), and drops its tools when it is removed', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/plain.yaml': yamlTool });
    const data = join(project, 'data');
    mkdirSync(data);
    writeFileSync(join(data, 'note.txt'), 'hello from the filesystem server');
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth'], { cwd: project });
    try {
      writeFileSync(join(project, 'forge.yaml'), withFilesystem(data));
      await agent.waitFor(/tools added [^\n]*fs__read_text_file/, 60_000);
      expect(agent.output()).toContain('mcp: fs added');
      const read = await post(agent.url, 'fs__read_text_file', { path: join(data, 'note.txt') });
      expect(read.status, JSON.stringify(read.body)).toBe(200);
      expect(JSON.stringify(read.body.value)).toContain('hello from the filesystem server');
      expect(await names(agent.url)).toEqual(['fs__list_directory', 'fs__read_text_file', 'plain']);
      // A tool its allow: leaves out is answered with why, as for a server there at start (it said "did you mean").
      const left = await post(agent.url, 'fs__write_file', { path: join(data, 'x'), content: 'y' });
      expect(left.body.error).toMatchObject({ code: 'FORGE_TOOL_UNKNOWN', message: expect.stringContaining('mcp.servers[fs].tools in forge.yaml leaves "write_file" out') });
      expect(serversFor(data).length).toBeGreaterThan(0);
      // No line says the tools' server is not configured, as it was before it connected.
      expect(agent.output()).not.toMatch(/not configured|cannot load fs__/);

      writeFileSync(join(project, 'forge.yaml'), minimalConfig());
      await agent.waitFor(/tools removed [^\n]*fs__read_text_file/, 60_000);
      expect(agent.output()).toContain('mcp: fs removed');
      expect(await names(agent.url)).toEqual(['plain']);
      // Its process is stopped, not left running beside the agent.
      await until(() => serversFor(data).length === 0, 'the filesystem server to stop', agent.output);
      expect((await post(agent.url, 'plain')).body.value).toBe('plain');
      expect(agent.child.exitCode).toBeNull();
    } finally {
      await agent.stop();
    }
  }, 180_000);

  it('keeps the connections of servers a save leaves as they were: only the edited tool reloads', async () => {
    const project = writeProject({ 'tools/plain.yaml': yamlTool });
    const data = join(project, 'data');
    mkdirSync(data);
    writeFileSync(join(project, 'forge.yaml'), withFilesystem(data));
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth'], { cwd: project });
    try {
      // The server connected at start, answering. A load lists the servers' tools through a server of its own, which
      // stops once it has (the first reload, when the watcher is armed, runs one): wait for that one to be gone.
      const read = await post(agent.url, 'fs__list_directory', { path: data });
      expect(read.status, JSON.stringify(read.body)).toBe(200);
      await until(() => serversFor(data).length === 1, 'the server listing the tools to stop', agent.output);
      const before = serversFor(data);
      writeFileSync(join(project, 'tools/plain.yaml'), yamlTool.replace('echo plain', 'echo edited'));
      await agent.waitFor('tools reloaded plain\n', 60_000);
      expect((await post(agent.url, 'plain')).body.value).toBe('edited');
      expect(agent.output()).not.toMatch(/mcp: |reloaded [^\n]*fs__/);
      // The same server process answers: not restarted, and no second one started beside it.
      expect((await post(agent.url, 'fs__list_directory', { path: data })).status).toBe(200);
      await until(() => serversFor(data).length === 1, 'the server listing the tools to stop', agent.output);
      expect(serversFor(data)).toEqual(before);
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it('stops the old servers when a reload fails after connecting the new ones, and connects again on the next save', async () => {
    // The failure is injected in-process through the registry the reload swaps tools into: nothing a project can
    // do makes the reload throw between connecting the new servers and putting their tools in.
    const project = writeProject({ 'tools/plain.yaml': yamlTool });
    const [a, b] = [join(project, 'a'), join(project, 'b')];
    for (const dir of [a, b]) {
      mkdirSync(dir);
      writeFileSync(join(dir, 'note.txt'), `note in ${dir}`);
    }
    const configFile = join(project, 'forge.yaml');
    writeFileSync(configFile, withFilesystem(a));
    const lines: string[] = [];
    const log = { debug: () => {}, info: (m: string) => void lines.push(m), warn: (m: string) => void lines.push(m) };
    const output = () => lines.join('\n');
    const agent = (await loadSourceAgent({ configFile, dev: true, log }))!;
    expect(agent, output()).toBeDefined();
    const stop = await watchForChanges(agent, { configFile, log });
    try {
      await until(() => serversFor(a).length === 1, 'the server listing the tools to stop', output);
      const replace = agent.registry.replace.bind(agent.registry);
      let failures = 1;
      agent.registry.replace = (tool: Tool, origin: string) => {
        if (tool.adapter && failures-- > 0) throw new Error('injected: the registry refused the tool');
        return replace(tool, origin);
      };
      writeFileSync(configFile, withFilesystem(b));
      await until(() => output().includes('reload failed: injected'), 'the reload to fail', output, 60_000);
      // The old server is not left running with nothing to close it.
      await until(() => serversFor(a).length === 0, 'the old filesystem server to stop', output);
      // The old runtime's tools, not made again, say so instead of calling through closed connections.
      const stale = await agent.registry.execute('fs__read_text_file', { path: join(b, 'note.txt') });
      expect(stale.ok).toBe(false);
      expect(JSON.stringify(stale)).toContain('FORGE_TOOL_UNAVAILABLE');
      expect(JSON.stringify(stale)).toContain('the reload failed');

      // A save that touches no server is the retry: every adapter tool is made again on a fresh runtime.
      writeFileSync(join(project, 'tools/plain.yaml'), yamlTool.replace('echo plain', 'echo edited'));
      await until(() => /tools [^\n]*fs__read_text_file/.test(output()), 'the adapter tools to be made again', output, 60_000);
      expect(output()).toContain('mcp: connecting again');
      const read = await agent.registry.execute('fs__read_text_file', { path: join(b, 'note.txt') });
      expect(read.ok, JSON.stringify(read)).toBe(true);
      expect(JSON.stringify(read)).toContain(`note in ${b}`);
      // The runtime of the failed reload is closed too: one server for b, none for a.
      await until(() => serversFor(b).length === 1, 'one filesystem server for b', output);
      expect(serversFor(a)).toEqual([]);
    } finally {
      stop();
      await agent.registry.close();
      await agent.adapters.close();
    }
  }, 180_000);

  it('keeps the old servers serving a call in flight when a save replaces them, and stops them once it is done', async () => {
    const { data, configFile, held, log, output, agent } = await filesystemAgent();
    const reports: ReloadReport[] = [];
    const stop = await watchForChanges(agent, { configFile, log, onReload: (report) => void reports.push(report) });
    // The reload's own retiring of the tools it replaces, watched (not changed) to know when it is done.
    const retiring = new Map<Tool, Promise<void>>();
    const retire = agent.registry.retire.bind(agent.registry);
    agent.registry.retire = (tool: Tool) => {
      const done = retire(tool);
      retiring.set(tool, done);
      return done;
    };
    try {
      await until(() => serversFor(data).length === 1, 'the server listing the tools to stop', output);
      const [old] = serversFor(data);
      const idle = agent.registry.get('fs__list_directory')!;
      const inFlight = agent.registry.execute('fs__read_text_file', { path: held.path });
      await held.reading(output);

      // The server's settings change: a new runtime, and every fs tool made again on it. The old
      // fs__list_directory has no call running, so it is closed at once; the old fs__read_text_file is reading.
      writeFileSync(configFile, withFilesystem(data).replace('list_directory]', 'list_directory, list_allowed_directories]'));
      await until(() => reports.some((r) => r.added.includes('fs__list_allowed_directories')) && retiring.has(idle), 'the reload', output, 60_000);
      expect(output()).toContain('mcp: fs changed');
      await retiring.get(idle);
      // Closing the idle tool left the connection the call runs on alone: the old server still serves it.
      expect(serversFor(data)).toContain(old);
      held.release('read while the servers were replaced');
      expect(await inFlight).toMatchObject({ ok: true, value: { content: 'read while the servers were replaced' } });
      // Its call done, the old server stops; the new one answers every tool.
      await until(() => !serversFor(data).includes(old), 'the old filesystem server to stop', output);
      expect(await agent.registry.execute('fs__read_text_file', { path: join(data, 'note.txt') })).toMatchObject({ ok: true, value: { content: 'a note' } });
      expect((await agent.registry.execute('fs__list_allowed_directories', {})).ok).toBe(true);
    } finally {
      stop();
      held.release('');
      // The runtime the reload put in is the registry's to close, as the one it replaced was.
      await agent.registry.close();
    }
    try {
      await until(() => serversFor(data).length === 0, 'the filesystem servers to stop when the registry closes', output);
    } finally {
      await agent.adapters.close();
    }
  }, 180_000);

  it('keeps the connections when a reload retires one tool of a server: a call in flight on another finishes, it answers after, and stopping the agent closes the connections', async () => {
    const { project, data, held, log, output, agent } = await filesystemAgent();
    // Served as `forge run` and a bundle's `serve` serve it: its stop is how the agent shuts down.
    const running = await serveAgent({ manifest: agent.manifest, registry: agent.registry, workDir: project, host: '127.0.0.1', port: 0, noAuth: true, http: agent.http, log, env: {} });
    try {
      await until(() => serversFor(data).length === 1, 'the server listing the tools to stop', output);
      const [server] = serversFor(data);
      const inFlight = post(running.url, 'fs__read_text_file', { path: held.path });
      await held.reading(output);
      // What a reload does with a tool it makes again on the same connections (dev-reload.ts, swapIn): the new
      // version in, the old one closed once its own calls are done (it has none).
      const old = agent.registry.get('fs__list_directory')!;
      const previous = agent.registry.replace(agent.adapters.create(toSpec(old)), 'forge.yaml');
      expect(previous).toBe(old);
      await agent.registry.retire(previous!);
      expect(serversFor(data)).toEqual([server]);
      held.release('read while a tool was retired');
      const read = await inFlight;
      expect(read.status, JSON.stringify(read.body)).toBe(200);
      expect(read.body.value).toEqual({ content: 'read while a tool was retired' });
      // The other tool, and the new version of the retired one, still answer, on the same server.
      expect((await post(running.url, 'fs__read_text_file', { path: join(data, 'note.txt') })).body.value).toEqual({ content: 'a note' });
      const listed = await post(running.url, 'fs__list_directory', { path: data });
      expect(listed.status, JSON.stringify(listed.body)).toBe(200);
      expect(serversFor(data)).toEqual([server]);
    } finally {
      held.release('');
      await running.stop(1000);
    }
    try {
      await until(() => serversFor(data).length === 0, 'the filesystem server to stop with the agent', output);
    } finally {
      await agent.adapters.close();
    }
  }, 120_000);
});

/** A project whose forge.yaml connects the filesystem server to its data/ (holding note.txt and a held file), loaded for dev. */
async function filesystemAgent() {
  const project = writeProject({ 'tools/plain.yaml': yamlTool });
  const data = join(project, 'data');
  mkdirSync(data);
  writeFileSync(join(data, 'note.txt'), 'a note');
  const configFile = join(project, 'forge.yaml');
  writeFileSync(configFile, withFilesystem(data));
  const held = heldFile(data);
  const { log, output } = lineLog();
  const agent = (await loadSourceAgent({ configFile, dev: true, log }))!;
  expect(agent, output()).toBeDefined();
  return { project, data, configFile, held, log, output, agent };
}
