/**
 * The secret values the runtime itself holds — model keys (from any
 * api_key_env, or its _FILE), the agent's token, adapter credentials — so
 * that what it records or reports (trace content, a provider's error text in
 * a task status, a log line, a span's error) can mask them, whatever the
 * variable that held them was called. A name-based rule alone misses
 * FAKE_KEY, OPENROUTER_KEY or a key read from a file.
 */
export const REDACTED = '[REDACTED]';
/** Shorter values would mask ordinary words; a real key or token is longer. */
const MIN_SECRET_LENGTH = 8;

const known = new Set<string>();
/** The spellings to mask, longest first, per `extra` list: made once, not on every redaction (trace content is on a hot path). */
let ordered = new WeakMap<readonly string[], string[]>();
const NONE: readonly string[] = [];

/** Remembers a secret the runtime read, so that every redaction masks it from now on. */
export function rememberSecret(value: string | undefined): void {
  const secret = value?.trim();
  if (!secret || secret.length < MIN_SECRET_LENGTH || known.has(secret)) return;
  known.add(secret);
  ordered = new WeakMap();
}

/** Whether any secret is remembered: with none, nothing needs looking at. */
export function knowsSecrets(): boolean {
  return known.size > 0;
}

/** `text` with every remembered secret (and every one of `extra`) replaced by [REDACTED]. */
export function redactSecrets(text: string, extra: readonly string[] = NONE): string {
  if (!known.size && !extra.length) return text;
  let secrets = ordered.get(extra);
  if (!secrets) {
    // Longest first: a secret that contains another is masked whole. JSON text holds a secret escaped.
    secrets = [...new Set([...known, ...extra])].flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]).sort((a, b) => b.length - a.length);
    ordered.set(extra, secrets);
  }
  for (const secret of secrets) if (text.includes(secret)) text = text.split(secret).join(REDACTED);
  return text;
}

/** The shortest piece of a secret a cut may leave that is masked: shorter ones say nothing of it. */
const MIN_CUT_PIECE = 4;

/**
 * `text` that was cut from a longer one (the head of a program's output, the
 * tail of its stderr), masked, and with the piece of a remembered secret the
 * cut went through masked too: at the `end` of a head, the secret's start;
 * at the `start` of a tail, its end. Whole, the piece would not be recognised.
 */
export function redactCutText(text: string, cut: 'start' | 'end'): string {
  text = redactSecrets(text);
  for (const secret of known) {
    for (let n = Math.min(secret.length - 1, text.length); n >= MIN_CUT_PIECE; n--) {
      if (cut === 'end' && text.endsWith(secret.slice(0, n))) return text.slice(0, -n) + REDACTED;
      if (cut === 'start' && text.startsWith(secret.slice(-n))) return REDACTED + text.slice(n);
    }
  }
  return text;
}
