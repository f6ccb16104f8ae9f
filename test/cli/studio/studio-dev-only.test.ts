/**
 * The studio ships only with `forge run --dev`: a built bundle (prod or
 * dev) carries none of its bytes and answers 404 at /studio, and so does
 * `forge run` without --dev.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startAgentProcess } from '../../helpers/agent-process.ts';
import { deployBundle, forge, forgeBin, minimalConfig, repoRoot, writeProject } from '../../helpers/project.ts';

const echo = '"""\nTool: echo\nDescription: Echo.\nTags: read\n\nInput:\n  message (str): The message.\n"""\n\ndef execute(args):\n    return args\n';
// Strings only the studio has: its page, its client code, its API routes.
const STUDIO_MARKERS = ['/studio/api', 'forge-studio-token', 'studio.css', 'Forge studio', 'trace-select'];

describe('the studio is dev-only', () => {
  it.each([['forge build --prod', ['--prod']], ['forge build', []]])('a bundle made by %s has no studio bytes and answers 404 at /studio', async (_name, flags) => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/echo.py': echo });
    const built = await forge(['build', ...flags], project);
    expect(built.code, built.stderr).toBe(0);
    const { bundle, workDir } = deployBundle(project);
    const runtime = readFileSync(join(bundle, 'runtime.mjs'), 'utf8');
    for (const marker of STUDIO_MARKERS) expect(runtime).not.toContain(marker);
    // The page's own built code is nowhere in the bundle either.
    const studioJs = readFileSync(join(repoRoot, 'dist', 'studio', 'studio.js'), 'utf8');
    expect(runtime).not.toContain(studioJs.slice(200, 400));

    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: workDir, env: { FORGE_AUTH_TOKEN: 'tok' } });
    try {
      for (const path of ['/studio', '/studio/studio.js', '/studio/api/events']) {
        const response = await fetch(`${agent.url}${path}`, { headers: { authorization: 'Bearer tok' } });
        expect(response.status, path).toBe(404);
      }
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it('forge run without --dev serves no studio and prints no studio link', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/echo.py': echo });
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--port', '0'], { cwd: project, env: { FORGE_AUTH_TOKEN: 'tok' } });
    try {
      await agent.waitFor('rest ');
      expect(agent.output()).not.toContain('studio');
      expect((await fetch(`${agent.url}/studio`, { headers: { authorization: 'Bearer tok' } })).status).toBe(404);
    } finally {
      await agent.stop();
    }
  });
});
