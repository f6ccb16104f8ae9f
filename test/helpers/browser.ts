/** A real headless Chromium (Debian's package) driven by playwright-core, with a fresh profile per launch. */
import type { BrowserContext } from 'playwright-core';
import { chromium } from 'playwright-core';
import { onFileEnd } from './file-cleanup.ts';
import { tempDir } from './project.ts';

export const CHROMIUM = process.env.FORGE_TEST_CHROMIUM ?? '/usr/bin/chromium';

const contexts: BrowserContext[] = [];
onFileEnd(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close().catch(() => {})));
});

export async function launchBrowser(viewport = { width: 1440, height: 900 }): Promise<BrowserContext> {
  const context = await chromium.launchPersistentContext(tempDir('forge-chromium-'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  contexts.push(context);
  return context;
}
