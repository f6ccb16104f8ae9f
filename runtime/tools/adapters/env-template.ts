/**
 * `${VAR}` in forge.yaml values (MCP headers, env, args and URLs) is read
 * from the environment when a connection is made, so agent.json never holds
 * the secret itself. `$${` writes a literal `${`. What a ${VAR} puts where a
 * credential goes is remembered for redaction (known-secrets.ts).
 */
import { rememberSecret } from '../../known-secrets.ts';
import { secretLookingEnvName } from '../../secret-names.ts';

export class MissingVariableError extends Error {
  constructor(
    readonly variable: string,
    readonly where: string,
  ) {
    super(`environment variable ${variable} is not set (used in ${where})`);
    this.name = 'MissingVariableError';
  }
}

const TEMPLATE = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The variables `text` names, as expandEnv reads them (`$${` is a literal). */
export function templateVariables(text: string): string[] {
  return [...text.matchAll(TEMPLATE)].flatMap((m) => (m[1] === undefined ? [] : [m[1]]));
}

export function expandEnv(text: string, env: NodeJS.ProcessEnv, where: string): string {
  return text.replace(TEMPLATE, (match, name: string | undefined) => {
    if (name === undefined) return '${';
    const value = env[name];
    if (value === undefined) throw new MissingVariableError(name, where);
    return value;
  });
}

export function expandEnvRecord(record: Record<string, string> | undefined, env: NodeJS.ProcessEnv, where: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(record ?? {})) out[key] = expandEnv(value, env, `${where}.${key}`);
  return out;
}

/**
 * Headers from forge.yaml (MCP servers', pinned webhooks'), expanded. What a
 * ${VAR} put in them is a credential ("Bearer ${DOCS_TOKEN}"): remembered,
 * value and whole header, for redaction.
 */
export function expandSecretHeaders(record: Record<string, string> | undefined, env: NodeJS.ProcessEnv, where: string): Record<string, string> {
  const out = expandEnvRecord(record, env, where);
  for (const [key, template] of Object.entries(record ?? {})) rememberExpanded(template, out[key], env);
  return out;
}

/**
 * A URL from forge.yaml (an MCP server's, a pinned webhook's), expanded. A
 * ${VAR} in it anywhere but the host is a credential — a key in the query
 * (?api_key=${KEY}), a path segment, a password, or the whole URL
 * (${SLACK_WEBHOOK_URL}) — and an error quoting the URL would show it:
 * remembered for redaction. One that only names the host is not.
 */
export function expandSecretUrl(template: string, env: NodeJS.ProcessEnv, where: string): string {
  const expanded = expandEnv(template, env, where);
  const host = URL.canParse(expanded) ? new URL(expanded).host : '';
  for (const name of templateVariables(template)) {
    const value = env[name];
    if (value && !host.includes(value)) rememberSecret(value);
  }
  return expanded;
}

/**
 * A stdio MCP server's args from forge.yaml, expanded. A ${VAR} with a
 * secret-looking name (--api-key=${SEARCH_API_KEY}) is remembered for
 * redaction; others (a directory, ${DATA_DIR}) are the server's data.
 */
export function expandSecretArgs(args: readonly string[], env: NodeJS.ProcessEnv, where: string): string[] {
  return args.map((arg, i) => {
    const expanded = expandEnv(arg, env, `${where}[${i}]`);
    for (const name of templateVariables(arg)) if (secretLookingEnvName(name)) rememberSecret(env[name]);
    return expanded;
  });
}

/** What a ${VAR} places in a process's environment but is no credential: the search path a stdio server may be given. */
const NOT_SECRET_ENV = new Set(['PATH', 'HOME', 'LANG', 'TMPDIR', 'TERM', 'USER', 'SHELL', 'PWD']);

/**
 * A stdio MCP server's env from forge.yaml, expanded. It is how forge.yaml
 * hands a server its credential (GITHUB_TOKEN: ${GITHUB_TOKEN}), and a server
 * that fails often quotes it on stderr, which its error shows: remembered,
 * value and whole entry, for redaction.
 */
export function expandSecretEnv(record: Record<string, string> | undefined, env: NodeJS.ProcessEnv, where: string): Record<string, string> {
  const out = expandEnvRecord(record, env, where);
  for (const [key, template] of Object.entries(record ?? {})) if (!NOT_SECRET_ENV.has(key.toUpperCase())) rememberExpanded(template, out[key], env);
  return out;
}

function rememberExpanded(template: string, expanded: string | undefined, env: NodeJS.ProcessEnv): void {
  for (const name of templateVariables(template)) rememberSecret(env[name]);
  if (template !== expanded) rememberSecret(expanded);
}
