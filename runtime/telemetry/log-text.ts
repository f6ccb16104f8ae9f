/**
 * A message as text log lines. Messages carry what others chose — a tool's
 * stderr, a traceback, an id an A2A client sent, an error a driver wrote —
 * and a line of them must not pass for one of the log's own (`[forge] ✓
 * approved …` after a newline) or rewrite the terminal: a line after the
 * first that starts at its first column is indented under the message, and
 * other control characters (a carriage return, an escape sequence) are
 * shown escaped. JSON logs need none of this: each message is one string.
 */
export function logText(message: string): string {
  return message
    .replace(/\r\n/g, '\n')
    .replace(/[\x00-\x08\x0b-\x1f\x7f]/g, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`)
    .replace(/\n(?=[^\s])/g, '\n  ');
}
