/**
 * The layer that holds the bundle: every file of the build output under
 * /opt/agent (root-owned, read-only to the agent's user; the archive is left
 * out — it holds the same files — and so is the code cache a local run of
 * the bundle wrote: made by this machine's Node, and different at every
 * write), and the empty work dir owned by the user.
 */
import { readFileSync, statSync } from 'node:fs';
import { relative, sep } from 'node:path';
import { BUNDLE_DIR, WORK_DIR } from './image-config.ts';
import type { LayerEntry } from './layer-writer.ts';
import { CODE_CACHE_DIR } from '../../runtime/core-loader.ts';
import { filesUnder } from '../../runtime/dirent-dir.ts';

export function bundleLayerEntries(bundleDir: string, user: { uid: number; gid: number }): LayerEntry[] {
  const entries: LayerEntry[] = [{ path: WORK_DIR, type: 'directory', mode: 0o755, ...user }];
  for (const absolute of filesUnder(bundleDir)) {
    const rel = relative(bundleDir, absolute).split(sep).join('/');
    if ((!rel.includes('/') && rel.endsWith('.tgz')) || rel.startsWith(`${CODE_CACHE_DIR}/`)) continue;
    const executable = (statSync(absolute).mode & 0o111) !== 0;
    entries.push({ path: `${BUNDLE_DIR}/${rel}`, type: 'file', data: readFileSync(absolute), mode: executable ? 0o755 : 0o644 });
  }
  return entries;
}
