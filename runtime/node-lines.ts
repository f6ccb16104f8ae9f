/**
 * The Node.js release lines Forge supports, and what differs between them.
 * One table, read by the build (the container's default base image), the
 * bundle (the end-of-life warning) and tool sandboxes (the permission flag).
 */

/** Supported major lines, oldest first. Odd lines are short-lived "current" releases and are not supported. */
export const SUPPORTED_NODE_LINES = [20, 22, 24, 26] as const;
export type NodeLine = (typeof SUPPORTED_NODE_LINES)[number];

/** The active LTS line: what generated Dockerfiles and images run on unless forge.yaml says otherwise. */
export const DEFAULT_NODE_LINE: NodeLine = 24;

/** Last day of security fixes for each line (the Node.js release schedule). */
export const END_OF_LIFE: Record<NodeLine, string> = {
  20: '2026-04-30',
  22: '2027-04-30',
  24: '2028-04-30',
  26: '2029-04-30',
};

export function nodeMajor(version: string = process.versions.node): number {
  return Number.parseInt(version.replace(/^v/, ''), 10);
}

/** The base image a bundle's container runs on by default. */
export function defaultBaseImage(line: number = DEFAULT_NODE_LINE): string {
  return `node:${line}-bookworm-slim`;
}

/**
 * One line to print at start when the bundle runs on a line without
 * security fixes, or on one Forge does not support; undefined when fine.
 */
export function nodeLineWarning(version: string = process.versions.node, today: Date = new Date()): string | undefined {
  const major = nodeMajor(version);
  const eol = END_OF_LIFE[major as NodeLine];
  const advice = `run it on Node.js ${SUPPORTED_NODE_LINES.filter((l) => l !== major && Date.parse(END_OF_LIFE[l]) > today.getTime()).join(', ')}`;
  if (eol === undefined) return `Node.js ${version} is not a line Forge supports (${SUPPORTED_NODE_LINES.join(', ')}); ${advice}`;
  if (Date.parse(eol) < today.getTime()) return `Node.js ${major} reached end of life on ${eol} and gets no security fixes; ${advice}`;
  return undefined;
}

/**
 * The flag that turns on Node's permission model: stable as `--permission`
 * from 22.13 (and the only spelling from 24 on), experimental before.
 */
export function permissionFlag(version: string = process.versions.node): '--permission' | '--experimental-permission' {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 13) ? '--permission' : '--experimental-permission';
}
