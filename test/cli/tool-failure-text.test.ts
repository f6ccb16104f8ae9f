/**
 * What `forge tool run` and the bundle's `call` print of a failing tool is
 * often someone else's text: a service's error body, a tool's stderr. It is
 * shown on the operator's terminal, never obeyed by it. (A result that
 * succeeds is printed as it is: it is the output the person asked for, as
 * curl prints a body.)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/http-server.ts';
import { forge, minimalConfig, runProcess, writeProject } from '../helpers/project.ts';

const hostile = 'denied \x1b]0;owned\x07\x1b[2J \x1b]8;;http://evil.example\x07click\x1b]8;;\x07 \u009b2J \u202etxt.exe';
const shownEscaped = 'denied \\x1b]0;owned\\x07\\x1b[2J \\x1b]8;;http://evil.example\\x07click\\x1b]8;;\\x07 \\x9b2J \\u{202e}txt.exe';
const raw = /[\x1b\x07\u0080-\u009f\u202e]/;

let service: TestServer;
let project: string;

beforeAll(async () => {
  service = await startServer((_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end(hostile));
  const document = {
    openapi: '3.0.3',
    info: { title: 'Shop', version: '1.0.0' },
    servers: [{ url: service.url }],
    paths: { '/items': { get: { operationId: 'listItems', responses: { '200': { description: 'the items' } } } } },
  };
  const noisy = `"""\nTool: noisy\nDescription: Complains on stderr.\nTags: read\n"""\nimport sys\n\ndef execute(args):\n    print(${JSON.stringify(hostile)}, file=sys.stderr)\n    return "done"\n`;
  project = writeProject({ 'forge.yaml': minimalConfig(`apis:\n  - name: shop\n    spec: specs/shop.json\n    base_url: ${JSON.stringify(service.url)}\n`), 'tools/noisy.py': noisy });
  mkdirSync(join(project, 'specs'));
  writeFileSync(join(project, 'specs', 'shop.json'), JSON.stringify(document));
});

describe('a failing tool\'s text on the terminal', () => {
  it('forge tool run shows a service\'s error body with its controls escaped', async () => {
    const { code, stdout, stderr } = await forge(['tool', 'run', 'shop__listItems'], project);
    expect(code).toBe(1);
    expect(stderr).toContain('FORGE_API_STATUS');
    expect(stderr).toContain(shownEscaped);
    expect(stdout + stderr).not.toMatch(raw);
  });

  it('forge tool run --verbose shows a tool\'s stderr with its controls escaped', async () => {
    const { code, stdout, stderr } = await forge(['tool', 'run', 'noisy', '--verbose'], project);
    expect(code, stderr).toBe(0);
    expect(stdout.trim()).toBe('done');
    expect(stderr).toContain(`noisy │ ${shownEscaped}`);
    expect(stderr).not.toMatch(raw);
  });

  it('the bundle\'s call shows a service\'s error body with its controls escaped', async () => {
    const built = await forge(['build'], project);
    expect(built.code, built.stderr).toBe(0);
    const { code, stdout, stderr } = await runProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'call', 'shop__listItems'], { cwd: project });
    expect(code).toBe(1);
    expect(stderr).toContain(shownEscaped);
    expect(stdout + stderr).not.toMatch(raw);
  });
});
