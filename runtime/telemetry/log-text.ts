/**
 * A message as text log lines. Every secret the runtime holds is masked
 * (known-secrets.ts): a gateway's error body, a tool's print, a server's
 * stderr may quote one. Messages carry what others chose — a tool's
 * stderr, a traceback, an id an A2A client sent, an error a driver wrote —
 * and a line of them must not pass for one of the log's own (`[forge] ✓
 * approved …` after a newline) or rewrite the terminal: control characters
 * are shown escaped (terminalText), and a line after the first that does
 * not start with a space or a tab is indented under the message. Only those
 * two count as indentation: a line starting with another Unicode space —
 * U+FEFF has no width at all — would still show at its first column. JSON
 * logs need none of this: each message is one string.
 */
import { redactSecrets } from '../known-secrets.ts';
import { terminalText } from './terminal-text.ts';

export function logText(message: string): string {
  return terminalText(redactSecrets(message)).replace(/\n(?![ \t\n]|$)/g, '\n  ');
}
