import { forgeVersion } from '../../stages/forge-paths.ts';
import { parseCommand } from '../args.ts';

export const usage = `usage: forge version [--json]\n`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommand(argv, {});
  printVersion(values.json);
  return 0;
}

export function printVersion(json: boolean, write: (text: string) => void = (text) => process.stdout.write(text)): void {
  const version = forgeVersion();
  write(json ? JSON.stringify({ forge: version, node: process.versions.node }) + '\n' : `forge ${version} (node ${process.versions.node})\n`);
}
