/**
 * The studio's page and its two prebuilt assets (dist/studio/, made by
 * scripts/build-studio.mjs at install). The page holds no secret: the token
 * reaches it in the URL fragment, which browsers never send to a server.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { forgeRoot } from '../../stages/forge-paths.ts';
import { ownValue } from '../../runtime/own-value.ts';

const ASSETS: Record<string, string> = { 'studio.js': 'text/javascript; charset=utf-8', 'studio.css': 'text/css; charset=utf-8' };

export const STUDIO_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export function studioHtml(agentId: string): string {
  const title = `${agentId} · Forge studio`.replace(/[<>&"]/g, '');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/studio/studio.css">
<script type="module" src="/studio/studio.js"></script>
</head>
<body>
<div id="studio"><p class="boot">Loading the studio…</p></div>
</body>
</html>
`;
}

/** The asset's text and content type, or undefined for a name that is not one. */
export function studioAsset(name: string): { body: Buffer; type: string } | undefined {
  const type = ownValue(ASSETS, name);
  if (!type) return undefined;
  try {
    return { body: readFileSync(join(forgeRoot, 'dist', 'studio', name)), type };
  } catch {
    return undefined;
  }
}
