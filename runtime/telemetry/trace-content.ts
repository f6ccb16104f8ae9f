/**
 * Arguments and results go into spans only when FORGE_TRACE_CONTENT=1, and
 * never a secret: values under secret-looking keys are replaced, and so is,
 * wherever it appears, any value of a secret-looking environment variable,
 * the content of a file a *_FILE variable names, and every secret the
 * runtime read itself (known-secrets.ts: model keys from any api_key_env,
 * the agent token, adapter credentials).
 */
import { readFileSync, statSync } from 'node:fs';
import { REDACTED, redactSecrets } from '../known-secrets.ts';
import { SECRET_KEY, secretLookingEnvName } from '../secret-names.ts';
const MAX_CONTENT = 8192;
/** A secret file (a key, a token) is small; a larger file named by *_FILE is something else. */
const MAX_SECRET_FILE = 4096;

let enabled = process.env.FORGE_TRACE_CONTENT === '1';
let secretValues: string[] = collectSecrets(process.env);

export function traceContentEnabled(): boolean {
  return enabled;
}

/** For tests and for a process whose environment is not process.env. */
export function configureTraceContent(env: NodeJS.ProcessEnv): void {
  enabled = env.FORGE_TRACE_CONTENT === '1';
  secretValues = collectSecrets(env);
}

function collectSecrets(env: NodeJS.ProcessEnv): string[] {
  const values: string[] = [];
  for (const [key, value] of Object.entries(env)) {
    if (typeof value !== 'string') continue;
    if (key.endsWith('_FILE')) values.push(...fileSecret(value));
    else if (secretLookingEnvName(key)) values.push(value);
  }
  return values.filter((v) => v.length >= 8);
}

/** The trimmed content of the (small, regular) file `path`, if it is one. */
function fileSecret(path: string): string[] {
  try {
    const stat = statSync(path);
    if (!stat.isFile() || stat.size > MAX_SECRET_FILE) return [];
    return [readFileSync(path, 'utf8').trim()];
  } catch {
    return [];
  }
}

/** A JSON text of `value` with secrets masked, capped in size; undefined when content is not recorded. */
export function traceContent(value: unknown): string | undefined {
  if (!enabled) return undefined;
  let text: string;
  try {
    text = JSON.stringify(value, (key, v) => (key && SECRET_KEY.test(key) && v !== null && typeof v !== 'object' ? REDACTED : v)) ?? 'null';
  } catch {
    text = String(value);
  }
  text = redactSecrets(text, secretValues);
  return text.length > MAX_CONTENT ? `${text.slice(0, MAX_CONTENT)}…` : text;
}
