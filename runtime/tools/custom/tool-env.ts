/**
 * The environment a custom tool process gets: nothing from the parent but
 * PATH and LANG, HOME pointed at the work dir, and the variables forge.yaml
 * passes through by name. Secrets in the agent's own environment (API keys)
 * never reach a tool unless passed through on purpose. A value passed under
 * a secret-looking name (GITHUB_TOKEN) is remembered for redaction: a tool
 * that prints or returns it shows [REDACTED] in its result and the logs.
 */
import { rememberSecret } from '../../known-secrets.ts';
import { secretLookingEnvName } from '../../secret-names.ts';

export interface ToolEnvOptions {
  workDir: string;
  passthrough?: readonly string[];
  extra?: Record<string, string>;
  parent?: NodeJS.ProcessEnv;
}

export function toolEnvironment(options: ToolEnvOptions): Record<string, string> {
  const parent = options.parent ?? process.env;
  const env: Record<string, string> = {
    PATH: parent.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    LANG: parent.LANG ?? 'C.UTF-8',
    HOME: options.workDir,
  };
  if (parent.SYSTEMROOT) env.SYSTEMROOT = parent.SYSTEMROOT; // Windows processes need it to start
  for (const name of options.passthrough ?? []) {
    const value = parent[name];
    if (value === undefined) continue;
    env[name] = value;
    if (secretLookingEnvName(name)) rememberSecret(value);
  }
  return { ...env, ...options.extra };
}

/** For every Python process a tool starts: no __pycache__ written into the bundle, no buffered output. */
export const PYTHON_TOOL_ENV: Readonly<Record<string, string>> = { PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' };
