/**
 * `${VAR}` in forge.yaml values (MCP headers, env, args and URLs) is read
 * from the environment when a connection is made, so agent.json never holds
 * the secret itself. `$${` writes a literal `${`.
 */
import { rememberSecret } from '../../known-secrets.ts';

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
  for (const [, name] of template.matchAll(TEMPLATE)) if (name) rememberSecret(env[name]);
  if (template !== expanded) rememberSecret(expanded);
}
