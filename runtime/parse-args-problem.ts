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
  if (unknown) return { message: `unknown option ${unknown[1]}`, unknownOption: unknown[1], hint: didYouMean(unknown[1], [...options].map((o) => `--${o}`)) };
  // "Option '-p, --param <value>' argument missing": the option ended the command line.
  const missing = /^Option '(?:-\w, )?(--[^' ]+) <value>' argument missing/.exec(message);
  if (missing) return { message: `${missing[1]} needs a value` };
  // "Option '--port' argument is ambiguous. ... use '--port=-XYZ'": the next word starts with a dash.
  const ambiguous = /^Option '[^']+' argument is ambiguous[\s\S]*?use '(--[^'=]+)=-XYZ'/.exec(message);
  if (ambiguous) return { message: `${ambiguous[1]} needs a value`, hint: `the word after it starts with a dash, so it is read as an option; if it is the value, write ${ambiguous[1]}=VALUE` };
  // "Option '--dev' does not take an argument" (--dev=yes).
  const flag = /^Option '(?:-\w, )?(--[^' ]+)' does not take an argument/.exec(message);
  if (flag) return { message: `${flag[1]} takes no value`, hint: `write ${flag[1]} alone to turn it on` };
  return { message: message.replace(/\. To specify.*$/s, '') };
}
