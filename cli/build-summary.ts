/** What `forge build` prints when it is done: tools by category, artifacts with sizes, time taken. */
import { relative } from 'node:path';
import type { BuildSummary } from '../stages/pipeline.ts';
import type { StageTiming } from '../stages/stage.ts';
import { color as c, formatMs, formatSize } from './terminal.ts';

export function renderSummary(summary: BuildSummary, cwd: string): string {
  const lines: string[] = [];
  lines.push(`${c.bold(summary.agentId)} ${summary.version} ${c.dim(`(${summary.mode})`)}`);
  const counts = Object.entries(summary.tools.byCategory)
    .filter(([, n]) => n > 0)
    .map(([category, n]) => `${category} ${n}`)
    .join(' · ');
  let toolsLine = `  tools    ${summary.tools.total}${counts ? `  ${c.dim('(')}${counts}${c.dim(')')}` : ''}`;
  if (summary.tools.strippedDevTools.length) toolsLine += `  ${c.dim(`dev tools stripped: ${summary.tools.strippedDevTools.join(', ')}`)}`;
  lines.push(toolsLine);
  const domains = summary.egress.allowedDomains.length ? summary.egress.allowedDomains.join(', ') : 'no domains';
  lines.push(`  egress   ${summary.egress.mode}${summary.egress.mode === 'allowlist' ? `: ${domains}` : ''}`);
  if (summary.egress.allowedAddresses?.length) lines.push(`           ${c.dim('non-public addresses allowed:')} ${summary.egress.allowedAddresses.join(', ')}`);
  lines.push(`  output   ${relative(cwd, summary.outDir) || '.'}/`);

  // tools/ is listed as one line: a project may have hundreds of tool files.
  const rows: [string, number][] = [];
  let toolFiles = 0;
  let toolBytes = 0;
  for (const a of summary.artifacts) {
    if (a.path.startsWith('tools/')) {
      toolFiles++;
      toolBytes += a.size;
    } else rows.push([a.path, a.size]);
  }
  if (toolFiles) rows.push([`tools/ (${toolFiles} file${toolFiles === 1 ? '' : 's'})`, toolBytes]);
  rows.sort((a, b) => order(a[0]) - order(b[0]) || (a[0] < b[0] ? -1 : 1));
  const width = Math.max(...rows.map((r) => r[0].length));
  for (const [name, size] of rows) lines.push(`    ${name.padEnd(width)}  ${formatSize(size).padStart(9)}`);
  return lines.join('\n');
}

const ORDER = ['agent.json', 'runtime.mjs', 'forge-runtime.cjs', 'vendor/', 'tools/', 'Dockerfile', '.dockerignore', 'build-manifest.json', 'checksums.json'];
function order(name: string): number {
  const i = ORDER.findIndex((o) => name.startsWith(o));
  return i < 0 ? ORDER.length : i;
}

export function renderTimings(timings: readonly StageTiming[]): string {
  const width = Math.max(...timings.map((t) => t.stage.length));
  return timings.map((t) => `  ${c.dim(t.stage.padEnd(width))}  ${formatMs(t.ms).padStart(8)}`).join('\n');
}
