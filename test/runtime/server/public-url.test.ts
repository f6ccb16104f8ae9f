/** --public-url that is no http(s) URL is refused at start, as a usage error, by forge run and the bundle's serve alike. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { publicUrlProblem } from '../../../runtime/server/public-url.ts';
import { startAgentProcess } from '../../helpers/agent-process.ts';
import { deployBundle, forge, forgeBin, minimalConfig, runProcess, writeProject } from '../../helpers/project.ts';

describe('publicUrlProblem', () => {
  it.each([['https://agent.example.com', false], ['http://10.0.0.5:8080/base', false], [undefined, false], ['notaurl', true], ['ftp://x', true], ['agent.example.com', true], ['http://', true]])('%s: refused %s', (url, refused) => {
    expect(publicUrlProblem(url) !== undefined).toBe(refused);
  });
});

describe('a --public-url that is no URL', () => {
  it('forge run and the bundle refuse it with exit 2 before serving', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    const said = '--public-url (or FORGE_PUBLIC_URL) must be an http:// or https:// URL, not "notaurl"';
    const run = await runProcess(process.execPath, [forgeBin, 'run', '--port', '0', '--public-url', 'notaurl'], { cwd: project });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`error: FORGE_SERVE_CONFIG ${said} (set it to the address clients reach the agent at: FORGE_PUBLIC_URL=https://agent.example.com)\n\nusage: forge run`);
    expect((await forge(['build'], project)).code).toBe(0);
    const { bundle } = deployBundle(project);
    const serve = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: bundle, env: { FORGE_PUBLIC_URL: 'notaurl' } });
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain(`${said}\n\n  serve [--host H]`);
  }, 60_000);
});

describe('FORGE_PUBLIC_URL and FORGE_HOST set but empty', () => {
  it('is unset, as a compose file or a Helm chart leaves it: the bundle serves, and its card names the address it was reached at', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    expect((await forge(['build'], project)).code).toBe(0);
    const { bundle } = deployBundle(project);
    for (const empty of ['', ' ']) {
      const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: bundle, env: { FORGE_PUBLIC_URL: empty, FORGE_HOST: empty, FORGE_AUTH_TOKEN: 'tok' } });
      try {
        // FORGE_HOST empty is unset too: loopback, where "" made Node listen on every interface (http://:PORT).
        expect(agent.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        const card = (await (await fetch(`${agent.url}/.well-known/agent-card.json`)).json()) as { url: string };
        expect(card.url).toBe(`${agent.url}/a2a`);
      } finally {
        expect(await agent.stop('SIGTERM')).toBe(0);
      }
    }
  }, 60_000);
});

describe('FORGE_PUBLIC_URL with forge run', () => {
  it('is the URL the card advertises, as with the bundle (the refusal above names it beside --public-url)', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--port', '0'], { cwd: project, env: { FORGE_PUBLIC_URL: 'https://agent.example.com' } });
    try {
      const card = (await (await fetch(`${agent.url}/.well-known/agent-card.json`)).json()) as { url: string };
      expect(card.url).toBe('https://agent.example.com/a2a');
    } finally {
      expect(await agent.stop('SIGTERM')).toBe(0);
    }
  }, 60_000);
});
