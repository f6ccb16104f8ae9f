/**
 * Where people keep credentials in their home directory: SSH and GPG keys,
 * cloud and cluster logins, registry and package-index tokens, password
 * stores, and shell histories (which hold pasted tokens). The sandbox hides
 * each that exists from every tool process, so a tool run by `forge run
 * --dev` on a laptop cannot read the user's keys.
 *
 * A list rather than the whole home: interpreters and their packages live
 * there too (pyenv, nvm, conda, ~/.local), and tools need them.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

const CREDENTIAL_STORES = [
  // keys and agents
  '.ssh',
  '.gnupg',
  '.password-store',
  '.local/share/keyrings',
  // cloud and cluster logins
  '.aws',
  '.azure',
  '.config/gcloud',
  '.oci',
  '.kube',
  '.config/doctl',
  '.terraform.d',
  '.vault-token',
  '.config/op',
  '.boto',
  '.s3cfg',
  // registries, package indexes, forges
  '.docker',
  '.dockercfg',
  '.netrc',
  '.npmrc',
  '.yarnrc.yml',
  '.pypirc',
  '.gem/credentials',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.git-credentials',
  '.config/git/credentials',
  '.config/gh',
  '.config/hub',
  '.config/glab-cli',
  // databases
  '.pgpass',
  '.my.cnf',
  // histories
  '.bash_history',
  '.zsh_history',
  '.histfile',
  '.local/share/fish/fish_history',
  '.python_history',
  '.node_repl_history',
  '.psql_history',
  '.mysql_history',
  '.sqlite_history',
  '.rediscli_history',
];

/** The credential stores' paths under the agent's home (and under $HOME, where that differs), whether or not they exist. */
export function homeCredentialPaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const homes = [...new Set([env.HOME, homedir()].filter((home): home is string => !!home && home !== '/'))];
  return homes.flatMap((home) => CREDENTIAL_STORES.map((store) => join(home, store)));
}
