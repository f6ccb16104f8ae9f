/**
 * Arguments and results go into spans only when FORGE_TRACE_CONTENT=1, and
 * never a secret: values under secret-looking keys are replaced, and so is
 * any value of a secret-looking environment variable wherever it appears.
 */
const SECRET_KEY = /(authorization|api[-_]?key|token|secret|password|passwd|cookie|credential|private[-_]?key)/i;
const MAX_CONTENT = 8192;

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
  return Object.entries(env)
    .filter(([key, value]) => SECRET_KEY.test(key) && typeof value === 'string' && value.length >= 8)
    .map(([, value]) => value as string);
}

/** A JSON text of `value` with secrets masked, capped in size; undefined when content is not recorded. */
export function traceContent(value: unknown): string | undefined {
  if (!enabled) return undefined;
  let text: string;
  try {
    text = JSON.stringify(value, (key, v) => (key && SECRET_KEY.test(key) && v !== null && typeof v !== 'object' ? '[REDACTED]' : v)) ?? 'null';
  } catch {
    text = String(value);
  }
  for (const secret of secretValues) if (text.includes(secret)) text = text.split(secret).join('[REDACTED]');
  return text.length > MAX_CONTENT ? `${text.slice(0, MAX_CONTENT)}…` : text;
}
