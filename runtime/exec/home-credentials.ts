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
import { homedir, userInfo } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';

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
  '.config/containers/auth.json',
  '.m2/settings.xml',
  '.gradle/gradle.properties',
  '.config/rclone',
  '.cache/huggingface/token',
  '.huggingface',
  // agents' and container engines' sockets kept in the home
  '.1password',
  '.colima',
  '.lima',
  '.rd',
  '.Xauthority',
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

/** Variables that move a store out of its usual place (a path, or for KUBECONFIG a list of them). */
const STORE_VARIABLES = ['KUBECONFIG', 'AWS_SHARED_CREDENTIALS_FILE', 'AWS_CONFIG_FILE', 'DOCKER_CONFIG', 'GNUPGHOME', 'CLOUDSDK_CONFIG', 'AZURE_CONFIG_DIR', 'PGPASSFILE', 'NETRC'];

/**
 * The credential stores' paths, whether or not they exist: under the agent's
 * home ($HOME, and the account's own home where that differs), under
 * $XDG_CONFIG_HOME for those kept in ~/.config, and where the variables that
 * move them point.
 */
export function homeCredentialPaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const homes = [...new Set([env.HOME, homedir(), accountHome()].filter((home): home is string => !!home && home !== '/'))];
  const inHomes = homes.flatMap((home) => CREDENTIAL_STORES.map((store) => join(home, store)));
  const config = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : undefined;
  const inConfig = config ? CREDENTIAL_STORES.filter((store) => store.startsWith('.config/')).map((store) => join(config, store.slice('.config/'.length))) : [];
  const moved = STORE_VARIABLES.flatMap((name) => (env[name] ?? '').split(delimiter)).filter((path) => path && isAbsolute(path));
  return [...new Set([...inHomes, ...inConfig, ...moved])];
}

function accountHome(): string | undefined {
  try {
    return userInfo().homedir;
  } catch {
    return undefined; // no passwd entry (a container's arbitrary uid)
  }
}
