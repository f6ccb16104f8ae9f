/**
 * Where people keep credentials in their home directory: SSH and GPG keys,
 * cloud, cluster, data-platform and deploy logins, registry and
 * package-index tokens, AI coding agents' logins, password stores, and shell
 * histories (which hold pasted tokens). The sandbox hides each that exists
 * from every tool process, so a tool run by `forge run --dev` on a laptop
 * cannot read the user's keys.
 *
 * A list rather than the whole home: interpreters and their packages live
 * there too (pyenv, nvm, conda, ~/.local), and tools need them. For the same
 * reason ~/.gitconfig stays readable: every git a tool runs reads it (a token
 * someone put in it, an http.extraHeader, is not hidden; git's credential
 * stores are).
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
  '.terraformrc',
  '.vault-token',
  '.config/op',
  '.boto',
  '.s3cfg',
  '.config/openstack',
  '.config/hcloud',
  '.config/linode-cli',
  '.config/helm',
  '.pulumi/credentials.json',
  // private keys that decrypt a repository's secrets
  '.config/sops/age/keys.txt',
  // data platforms
  '.databrickscfg',
  '.snowflake',
  '.config/snowflake',
  '.kaggle/kaggle.json',
  '.config/kaggle/kaggle.json',
  // hosting and deploy CLIs
  '.config/configstore/firebase-tools.json',
  '.netlify/config.json',
  '.config/netlify/config.json',
  '.local/share/com.vercel.cli/auth.json',
  '.fly/config.yml',
  // flyctl's agent acts with the login it holds, for whoever reaches its socket
  '.fly/fly-agent.sock',
  '.wrangler/config/default.toml',
  '.config/.wrangler/config/default.toml',
  '.cloudflared',
  '.railway/config.json',
  '.supabase/access-token',
  '.circleci/cli.yml',
  '.sentryclirc',
  '.config/stripe/config.toml',
  '.config/ngrok/ngrok.yml',
  '.ngrok2/ngrok.yml',
  // AI coding agents' logins and API keys
  '.claude/.credentials.json',
  '.codex/auth.json',
  '.gemini/oauth_creds.json',
  '.config/github-copilot',
  // registries, package indexes, forges
  '.docker',
  '.dockercfg',
  '.netrc',
  '.npmrc',
  '.yarnrc.yml',
  '.pypirc',
  // pip and conda configs hold index and channel URLs with a token in them; composer's and bundler's, tokens
  '.pip/pip.conf',
  '.config/pip/pip.conf',
  '.condarc',
  '.composer/auth.json',
  '.config/composer/auth.json',
  '.bundle/config',
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
  // the master password that decrypts settings.xml's
  '.m2/settings-security.xml',
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

/** Variables that name a store moved out of its usual place (a path, or for KUBECONFIG a list of them); a directory named is hidden whole. */
const STORE_VARIABLES = [
  ...['KUBECONFIG', 'AWS_SHARED_CREDENTIALS_FILE', 'AWS_CONFIG_FILE', 'DOCKER_CONFIG', 'GNUPGHOME', 'CLOUDSDK_CONFIG', 'AZURE_CONFIG_DIR', 'PGPASSFILE', 'NETRC'],
  ...['HELM_CONFIG_HOME', 'HELM_REGISTRY_CONFIG', 'HELM_REPOSITORY_CONFIG', 'SOPS_AGE_KEY_FILE', 'DATABRICKS_CONFIG_FILE', 'SNOWFLAKE_HOME', 'TUNNEL_ORIGIN_CERT'],
  // TERRAFORM_CONFIG is the name Terraform still reads when TF_CLI_CONFIG_FILE is unset
  ...['TF_CLI_CONFIG_FILE', 'TERRAFORM_CONFIG', 'PIP_CONFIG_FILE', 'CONDARC', 'BUNDLE_USER_CONFIG'],
];

/**
 * Variables that name the directory a store is kept in, with the store's
 * path inside it. Only the store is hidden, as in the home (~/.codex/auth.json,
 * not ~/.codex): the rest there is settings, not secrets.
 */
const STORE_DIR_VARIABLES: Record<string, readonly string[]> = {
  CODEX_HOME: ['auth.json'],
  CLAUDE_CONFIG_DIR: ['.credentials.json'],
  // a home of Gemini CLI's own: it keeps its .gemini there
  GEMINI_CLI_HOME: ['.gemini/oauth_creds.json'],
  PULUMI_HOME: ['credentials.json'],
  KAGGLE_CONFIG_DIR: ['kaggle.json'],
  COMPOSER_HOME: ['auth.json'],
  // bundler's config is here unless BUNDLE_USER_CONFIG names it
  BUNDLE_USER_HOME: ['config'],
  FLY_CONFIG_DIR: ['config.yml', 'fly-agent.sock'],
};

/** The XDG base directories that move the stores kept under the home's default for each. */
const XDG_HOMES = { XDG_CONFIG_HOME: '.config/', XDG_DATA_HOME: '.local/share/' };

/**
 * The credential stores' paths, whether or not they exist: under the agent's
 * home ($HOME, and the account's own home where that differs), under
 * $XDG_CONFIG_HOME for those kept in ~/.config and $XDG_DATA_HOME for those
 * in ~/.local/share, and where the variables that move them point.
 */
export function homeCredentialPaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const homes = [...new Set([env.HOME, homedir(), accountHome()].filter((home): home is string => !!home && home !== '/'))];
  const inHomes = homes.flatMap((home) => CREDENTIAL_STORES.map((store) => join(home, store)));
  const inXdg = Object.entries(XDG_HOMES).flatMap(([name, prefix]) => {
    const base = absolute(env[name]);
    return base ? CREDENTIAL_STORES.filter((store) => store.startsWith(prefix)).map((store) => join(base, store.slice(prefix.length))) : [];
  });
  const moved = STORE_VARIABLES.flatMap((name) => (env[name] ?? '').split(delimiter)).filter((path) => path && isAbsolute(path));
  const inMovedDirs = Object.entries(STORE_DIR_VARIABLES).flatMap(([name, stores]) => {
    const dir = absolute(env[name]);
    return dir ? stores.map((store) => join(dir, store)) : [];
  });
  return [...new Set([...inHomes, ...inXdg, ...moved, ...inMovedDirs])];
}

/** A variable's value when it is an absolute path: a relative one would name a different place for every tool's cwd. */
function absolute(value: string | undefined): string | undefined {
  return value && isAbsolute(value) ? value : undefined;
}

function accountHome(): string | undefined {
  try {
    return userInfo().homedir;
  } catch {
    return undefined; // no passwd entry (a container's arbitrary uid)
  }
}
