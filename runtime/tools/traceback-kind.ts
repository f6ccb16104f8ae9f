/**
 * What a failed call's details hold when they are a Python traceback or a
 * JavaScript stack (a stderr tail is in the message already): what a
 * command line offers to show with its verbose switch.
 */
export function tracebackKind(details: string | undefined): 'traceback' | 'stack trace' | undefined {
  if (!details) return undefined;
  if (/^Traceback \(most recent call last\):/m.test(details)) return 'traceback';
  return /^\s*at (?:.*? \()?(?:file:\/\/)?\/[^()\n]+?:\d+:\d+\)?$/m.test(details) ? 'stack trace' : undefined;
}
