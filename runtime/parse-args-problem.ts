/** node:util parseArgs's complaints in Forge's words, for the CLI and the bundle's command line alike. */
import { didYouMean } from './suggest.ts';

export interface ParseArgsProblem {
  message: string;
  /** The option parseArgs did not know, as written. */
  unknownOption?: string;
  /** A near option among those known. */
  hint?: string;
}

/** `options`: the known option names, without dashes. */
export function parseArgsProblem(err: unknown, options: Iterable<string>): ParseArgsProblem {
  const message = String((err as Error)?.message ?? err);
  const unknown = /Unknown option '(-{1,2}[^']+)'/.exec(message);
  if (!unknown) return { message: message.replace(/\. To specify.*$/s, '') };
  return { message: `unknown option ${unknown[1]}`, unknownOption: unknown[1], hint: didYouMean(unknown[1], [...options].map((o) => `--${o}`)) };
}
