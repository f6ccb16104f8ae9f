import { forgeVersion } from '../../stages/forge-paths.ts';
import { parseCommand } from '../args.ts';

export const usage = `usage: forge version [--json]\n`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommand(argv, {});
  const version = forgeVersion();
  process.stdout.write(values.json ? JSON.stringify({ forge: version, node: process.versions.node }) + '\n' : `forge ${version} (node ${process.versions.node})\n`);
  return 0;
}
