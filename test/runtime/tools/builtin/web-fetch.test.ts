import { beforeAll, describe, expect, it } from 'vitest';
import { createEgressPolicy } from '../../../../runtime/guard/egress.ts';
import { HttpClient } from '../../../../runtime/net/http-client.ts';
import { tempDir } from '../../../helpers/project.ts';
import { startServer, type TestServer } from '../../../helpers/http-server.ts';
import { tools, type ToolHarness } from '../../../helpers/tools.ts';

const PAGE = `<!doctype html><html><head><title>Release notes &amp; more</title>
<style>body { color: red }</style><script>window.tracking = "SCRIPT_TEXT";</script></head>
<body>
<nav><a href="/">Home</a> <a href="/about">NAV_LINK</a></nav>
<header>SITE_HEADER</header>
<div class="content">
  <h1>Version 2.0</h1>
  <p>The <strong>new</strong>
     release adds <a href="https://example.org/docs">docs</a>.</p>
  <pre><code class="language-python">def add(a, b):
    return a &lt; b
</code></pre>
  <ul><li>fast</li><li>small</li></ul>
  <form><input name="q"><button>SEARCH_BUTTON</button></form>
</div>
<aside>SIDEBAR</aside>
<footer>FOOTER_TEXT</footer>
</body></html>`;

let server: TestServer;
let t: ToolHarness;

beforeAll(async () => {
  server = await startServer((req, res) => {
    switch (req.url) {
      case '/page':
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end(PAGE);
        return;
      case '/article':
        res.setHeader('content-type', 'text/html');
        res.end('<html><body><nav>MENU</nav><article><header>ARTICLE_TITLE</header><p>Body text.</p></article><footer>F</footer></body></html>');
        return;
      case '/moved':
        res.writeHead(301, { location: '/page' }).end();
        return;
      case '/plain':
        res.setHeader('content-type', 'text/plain');
        res.end('just  text\n  kept as is');
        return;
      case '/json':
        res.setHeader('content-type', 'application/json');
        res.end('{"a": 1}');
        return;
      case '/latin1':
        res.setHeader('content-type', 'text/plain; charset=iso-8859-1');
        res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
        return;
      case '/pdf':
        res.setHeader('content-type', 'application/pdf');
        res.end('%PDF-1.4');
        return;
      case '/unclosed':
        // 30 KB of elements never closed: node-html-parser would take minutes on the server's thread.
        res.setHeader('content-type', 'text/html');
        res.end(`<html><body><textarea>${'<div>'.repeat(3000)}${'<b>'.repeat(3000)}Deep &amp; unclosed text</body></html>`);
        return;
      case '/quoted-unclosed':
        // Unclosed elements whose quoted attribute holds a "<": 3,000 of them (48 kB) held the thread 14 s.
        res.setHeader('content-type', 'text/html');
        res.end(`<html><body>${'<div title="<">x'.repeat(6000)}<p>Quoted text</p></body></html>`);
        return;
      case '/dangling':
        // A tag the page never ends: the parser's pattern backtracked over the spaces after it (22 of them: 6 s).
        res.setHeader('content-type', 'text/html');
        res.end(`<html><body><p>Before it</p>${'<!--'.repeat(20_000)}<a${' '.repeat(40)}`);
        return;
      case '/paragraphs':
        // 20,000 paragraphs in a row (180 kB): the parser copies its children list at each one (13 s).
        res.setHeader('content-type', 'text/html');
        res.end(`<html><body>${'<p>x</p>\n'.repeat(20_000)}<p>The end</p></body></html>`);
        return;
      case '/many-elements':
        // 45,300 elements, none holding more than 300: past the count in all, under the count in one.
        res.setHeader('content-type', 'text/html');
        res.end(`<html><body>${`<div>${'<span>x</span>'.repeat(150)}</div>`.repeat(300)}<p>The end</p></body></html>`);
        return;
      case '/commented':
        res.setHeader('content-type', 'text/html');
        res.end(`<!doctype html><html><body>${'<!-- a note -->'.repeat(600)}<script>const t = "${'<div>'.repeat(600)}";</script><h1>Kept</h1><p>Still <b>parsed</b>.</p></body></html>`);
        return;
      case '/long':
        res.setHeader('content-type', 'text/html');
        res.end(`<p>${'word '.repeat(5000)}</p>`);
        return;
      default:
        res.statusCode = 404;
        res.end('no');
    }
  });
  t = await tools(['web_fetch'], { workDir: tempDir() });
});

interface FetchValue {
  url: string;
  title?: string;
  content: string;
  content_type: string;
  truncated: boolean;
}

describe('web_fetch', () => {
  it('reduces HTML to Markdown without scripts, styles, navigation, forms and page chrome, keeping code as is', async () => {
    const value = await t.value<FetchValue>('web_fetch', { url: `${server.url}/page` });
    expect(value.title).toBe('Release notes & more');
    expect(value.content).toContain('# Version 2.0');
    expect(value.content).toContain('The **new** release adds [docs](https://example.org/docs).');
    expect(value.content).toContain('```python\ndef add(a, b):\n    return a < b\n```');
    expect(value.content).toMatch(/\* fast\n\* small/);
    for (const dropped of ['SCRIPT_TEXT', 'color: red', 'NAV_LINK', 'SITE_HEADER', 'SEARCH_BUTTON', 'SIDEBAR', 'FOOTER_TEXT']) expect(value.content).not.toContain(dropped);
  });

  it('gives plain text when asked, keeping preformatted text exactly', async () => {
    const value = await t.value<FetchValue>('web_fetch', { url: `${server.url}/page`, format: 'text' });
    expect(value.content).toContain('Version 2.0\n\nThe new release adds docs.');
    expect(value.content).toContain('def add(a, b):\n    return a < b');
    expect(value.content).toContain('- fast\n- small');
    expect(value.content).not.toContain('<code');
    expect(value.content).not.toContain('NAV_LINK');
  });

  it('uses the only <article>, keeping its own header', async () => {
    const value = await t.value<FetchValue>('web_fetch', { url: `${server.url}/article`, format: 'text' });
    expect(value.content).toBe('ARTICLE_TITLE\n\nBody text.');
  });

  it('follows redirects and reports the final URL', async () => {
    expect((await t.value<FetchValue>('web_fetch', { url: `${server.url}/moved` })).url).toBe(`${server.url}/page`);
  });

  it.each([
    ['/plain', 'just  text\n  kept as is', 'text/plain'],
    ['/json', '{"a": 1}', 'application/json'],
    ['/latin1', 'café', 'text/plain'],
  ])('returns %s as it is', async (path, content, type) => {
    expect(await t.value<FetchValue>('web_fetch', { url: `${server.url}${path}` })).toMatchObject({ content, content_type: type, truncated: false });
  });

  it('reads a page with thousands of unclosed elements as its text, at once (parsing it would hold the server for minutes)', async () => {
    for (const format of ['markdown', 'text']) {
      const value = await t.value<FetchValue>('web_fetch', { url: `${server.url}/unclosed`, format });
      expect(value.content).toBe('Deep & unclosed text');
    }
  });

  it('reads them as text too when their attributes hold a "<", as the parser finds those tags', async () => {
    const started = performance.now();
    const value = await t.value<FetchValue>('web_fetch', { url: `${server.url}/quoted-unclosed`, format: 'text' });
    // Parsed, this page takes minutes (the cube of 6,000 elements closed at its end).
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(value.content).toMatch(/^x x x/);
    expect(value.content).toMatch(/Quoted text$/);
    expect(value.content).not.toContain('title=');
  });

  it.each([
    ['a tag it never ends, after 20,000 comments it never ends', '/dangling', /^Before it/],
    ['20,000 paragraphs in a row', '/paragraphs', /The end$/],
  ])('reads a page with %s at once', async (_, path, content) => {
    const started = performance.now();
    const value = await t.value<FetchValue>('web_fetch', { url: `${server.url}${path}`, format: 'text' });
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(value.content).toMatch(content);
  });

  it('reads a page of more than 40,000 elements as its text, without parsing it (its words apart, as tags taken out leave them)', async () => {
    const value = await t.value<FetchValue>('web_fetch', { url: `${server.url}/many-elements`, max_chars: 100_000 });
    expect(value.content).toMatch(/^x x x/);
    expect(value.content).toMatch(/The end$/);
  });

  it('still parses a page with many comments, and tags written in a script\'s text, which are no unclosed elements', async () => {
    expect((await t.value<FetchValue>('web_fetch', { url: `${server.url}/commented` })).content).toBe('# Kept\n\nStill **parsed**.');
  });

  it('cuts the content at max_chars and says so', async () => {
    const value = await t.value<FetchValue>('web_fetch', { url: `${server.url}/long`, max_chars: 100 });
    expect(value.content).toHaveLength(100);
    expect(value.truncated).toBe(true);
  });

  it('refuses content that is not a page or text', async () => {
    expect(await t.call('web_fetch', { url: `${server.url}/pdf` })).toMatchObject({ ok: false, error: { code: 'FORGE_FETCH_CONTENT_TYPE', message: expect.stringContaining('application/pdf'), hint: expect.stringContaining('http_request') } });
  });

  it('reports an HTTP error status', async () => {
    expect(await t.call('web_fetch', { url: `${server.url}/nothing` })).toMatchObject({ ok: false, error: { code: 'FORGE_FETCH_STATUS', message: expect.stringContaining('404') } });
  });

  it('goes through the runtime HTTP client and its egress policy, passing on the policy\'s hint', async () => {
    const hint = 'set egress.mode to allowlist and list the host in egress.allowed_domains';
    const denied = new HttpClient({ checkUrl: (url) => ({ host: url.hostname, rule: 'egress.mode is deny-all', hint }), checkAddress: () => undefined });
    const blocked = await tools(['web_fetch', 'http_request'], { workDir: tempDir(), http: denied });
    for (const name of ['web_fetch', 'http_request']) {
      expect(await blocked.call(name, { url: `${server.url}/page` })).toMatchObject({ ok: false, error: { code: 'FORGE_EGRESS_REFUSED', message: expect.stringContaining('deny-all'), hint } });
    }
    expect(server.requests.filter((r) => r.url === '/page').length).toBeGreaterThan(0);
  });

  it('names egress.allowed_addresses, not allowed_domains, when a private address is refused', async () => {
    const allowlist = new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: ['127.0.0.1'] }));
    const blocked = await tools(['web_fetch', 'http_request'], { workDir: tempDir(), http: allowlist });
    for (const name of ['web_fetch', 'http_request']) {
      expect(await blocked.call(name, { url: `${server.url}/page` })).toMatchObject({ ok: false, error: { code: 'FORGE_EGRESS_REFUSED', message: expect.stringContaining(name), hint: expect.stringContaining('egress.allowed_addresses') } });
    }
  });
});
