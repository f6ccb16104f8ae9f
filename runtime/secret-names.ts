/**
 * Which names say their value is a secret: a key under them in a tool's
 * arguments (api_key, Authorization), or an environment variable
 * (GITHUB_TOKEN, DB_PASSWORD, and FAKE_KEY or OPENROUTER_KEY by their _KEY).
 * A rule over names only; the values the runtime knows to be secrets
 * whatever their name are known-secrets.ts's.
 */
export const SECRET_KEY = /(authorization|api[-_]?key|token|secret|password|passwd|cookie|credential|private[-_]?key)/i;
/** Environment names that hold a secret besides SECRET_KEY's: FAKE_KEY, OPENROUTER_KEY, AZURE_OPENAI_KEY. */
const SECRET_ENV = /(^|_)KEY$/i;

export function secretLookingEnvName(name: string): boolean {
  return SECRET_KEY.test(name) || SECRET_ENV.test(name);
}
