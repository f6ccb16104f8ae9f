/**
 * The studio of `forge run --dev` in a real headless Chromium: opened with
 * the link the server prints (the token in the fragment), a tool run from
 * its form, a chat through a scripted model (real OpenAI wire format on
 * loopback) whose tool call needs approval, approved in the page, the
 * turn's trace timeline, and a tool added on disk appearing without a page
 * reload. Screenshots of each step go to test-artifacts/studio/.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startAgentProcess } from '../../helpers/agent-process.ts';
import { launchBrowser } from '../../helpers/browser.ts';
import { forgeBin, minimalConfig, repoRoot, writeProject } from '../../helpers/project.ts';
import { startScriptedOpenAI } from '../../helpers/scripted-llm.ts';
import { greet, startStudioAgent } from '../../helpers/studio.ts';

const ARTIFACTS = join(repoRoot, 'test-artifacts', 'studio');
const TOKEN = 'studio-browser-test-token-0123456789';

const wave = greet.replace('Tool: greet', 'Tool: wave').replace('Greets someone, as plainly or as fancily as asked.', 'Waves at someone.');

async function shot(page: Page, name: string) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
}

describe('the studio in a browser', () => {
  it('runs a tool from its form, chats with an approval, shows the trace, and picks up a new tool live', async () => {
    const llm = await startScriptedOpenAI([
      { text: 'I will save that note for you.', toolCalls: [{ id: 'call_save', name: 'save_note', arguments: { text: 'buy milk' } }] },
      (body) => ({ text: `Done: the note is saved (${JSON.parse(body.messages.at(-1).content).chars} characters).`, cachedTokens: 48 }),
      { toolCalls: [{ id: 'call_save_2', name: 'save_note', arguments: { text: 'eggs' } }] },
      { text: 'Understood, I did not save it.' },
    ]);
    const { agent, project } = await startStudioAgent(llm.url, TOKEN);
    try {
      await agent.waitFor(/studio\s+(http:\/\/\S+)/);
      const link = /studio\s+(http:\/\/\S+)/.exec(agent.output())![1];
      expect(link).toBe(`${agent.url}/studio#token=${TOKEN}`);

      const browser = await launchBrowser();
      const page = await browser.newPage();
      const failures: string[] = [];
      page.on('pageerror', (err) => failures.push(err.message));
      page.on('console', (m) => m.type() === 'error' && failures.push(m.text()));
      await page.goto(link);
      await page.getByRole('heading', { name: /test-agent/ }).waitFor();
      await page.getByText('live', { exact: true }).waitFor();
      // The token left the address bar (it stays in this tab's sessionStorage).
      expect(page.url()).toBe(`${agent.url}/studio`);
      await shot(page, '01-open');

      // A tool from its form.
      await page.getByRole('button', { name: /^greet/ }).click();
      await page.getByLabel('name', { exact: false }).first().fill('Ada');
      await page.getByLabel(/^times/).fill('2');
      await page.getByLabel(/^style/).selectOption('fancy');
      await page.getByRole('button', { name: 'Run greet' }).click();
      await page.getByText('"greeting": "~ Hello, AdaHello, Ada ~"').waitFor();
      await shot(page, '02-tool-run');

      // A chat whose tool call needs approval.
      await page.getByLabel('Message').fill('Please save a note: buy milk');
      await page.keyboard.press('Enter');
      await page.getByText('Approval needed').waitFor();
      await page.getByText('"save_note" is tagged write').waitFor();
      await shot(page, '03-approval');
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByText('Done: the note is saved (8 characters).').waitFor();
      const call = page.locator('.tool-call', { hasText: 'save_note' });
      await call.getByText(/^ok · \d/).waitFor();
      await call.getByText('approved by you').waitFor();
      await call.getByText('custom').waitFor();
      await call.getByText('Arguments and result').click();
      await call.getByText('"chars": 8').waitFor();
      await shot(page, '04-approved');

      // The trace of the resumed turn: the request, the turn, the tool call and the model call.
      const timeline = page.getByRole('table', { name: 'Spans of the selected trace' });
      await timeline.getByText('POST /studio/api/approve').waitFor();
      await timeline.getByText('invoke_agent test-agent').waitFor();
      await timeline.getByText('execute_tool save_note').waitFor();
      await timeline.getByText('chat scripted').waitFor();
      // The resumed turn's model call: what the provider's prompt cache served, apart.
      await timeline.getByText(/\d+ in \(48 cached\) \/ \d+ out tokens/).waitFor();
      await timeline.getByText('custom · gate: ask → approved').waitFor();
      // The earlier turn (the one that asked) is there too.
      const options = await page.locator('#trace-select option').allTextContents();
      expect(options.filter((o) => o.includes('turn')).length).toBe(2);
      await shot(page, '05-trace');

      // A tool added on disk shows up without reloading the page.
      writeFileSync(join(project, 'tools/wave.py'), wave);
      await page.getByRole('button', { name: /^wave/ }).waitFor({ timeout: 20_000 });
      await shot(page, '06-new-tool');

      // Keyboard: the filter, then the tools, are reached with Tab; Enter opens a tool's form.
      await page.locator('body').click({ position: { x: 5, y: 5 } });
      await page.keyboard.press('Tab');
      expect(await page.evaluate("document.activeElement?.id")).toBe('tool-filter');
      await page.keyboard.type('wav');
      await page.keyboard.press('Tab');
      expect(await page.evaluate("document.activeElement?.textContent")).toContain('wave');
      await page.keyboard.press('Enter');
      await page.getByRole('button', { name: 'Run wave' }).waitFor();

      // A pending approval survives a page reload (the token stays in the tab), and Deny refuses the call.
      await page.getByLabel('Message').fill('Save another note: eggs');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByText('Approval needed').waitFor();
      await page.reload();
      await page.getByText('Approval needed').waitFor();
      // The reloaded page shows the conversation the model has, not an empty chat.
      await page.getByText('Done: the note is saved (8 characters).').waitFor();
      await page.getByText('Save another note: eggs').waitFor();
      await page.getByText('"text": "eggs"').waitFor();
      await page.getByRole('button', { name: 'Deny' }).click();
      await page.getByText('Understood, I did not save it.').waitFor();
      await page.locator('.tool-call', { hasText: 'save_note' }).getByText('denied by you').waitFor();
      await shot(page, '08-denied-after-reload');
      expect(readFileSync(join(project, 'notes.txt'), 'utf8')).toBe('buy milk\n');

      expect(failures, failures.join("\n")).toEqual([]);
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it('without the token the page says how to get in, and its API refuses', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.py': greet });
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0'], { cwd: project, env: { FORGE_AUTH_TOKEN: TOKEN } });
    try {
      const browser = await launchBrowser();
      const page = await browser.newPage();
      await page.goto(`${agent.url}/studio`);
      await page.getByText('This page needs the link that `forge run --dev` prints').waitFor();
      await shot(page, '07-no-token');
      for (const path of ['/studio/api/events', '/studio/api/info']) expect((await fetch(`${agent.url}${path}`)).status).toBe(401);
      const chat = await fetch(`${agent.url}/studio/api/chat`, { method: 'POST', body: '{"contextId":"x","text":"hi"}', headers: { authorization: 'Bearer wrong' } });
      expect(chat.status).toBe(401);
      // The page itself is static and strict about what it may load.
      const html = await fetch(`${agent.url}/studio`);
      expect(html.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await html.text()).not.toContain(TOKEN);
    } finally {
      await agent.stop();
    }
  }, 60_000);
});
