/** Where the sandbox looks for the home's credential stores: the usual places, and where variables move them. */
import { describe, expect, it } from 'vitest';
import { homeCredentialPaths } from '../../../runtime/exec/home-credentials.ts';

describe('homeCredentialPaths', () => {
  it('names the usual stores under $HOME', () => {
    const paths = homeCredentialPaths({ HOME: '/home/ada' });
    for (const store of ['.ssh', '.aws', '.kube', '.docker', '.npmrc', '.netrc', '.config/gh', '.bash_history']) expect(paths).toContain(`/home/ada/${store}`);
  });

  it('follows the variables that move a store, and XDG_CONFIG_HOME for those kept in ~/.config', () => {
    const paths = homeCredentialPaths({ HOME: '/home/ada', KUBECONFIG: '/etc/kube/a.yaml:/srv/kube/b.yaml', DOCKER_CONFIG: '/srv/docker', GNUPGHOME: '/srv/gnupg', AWS_SHARED_CREDENTIALS_FILE: '/srv/aws/credentials', XDG_CONFIG_HOME: '/srv/config' });
    expect(paths).toEqual(expect.arrayContaining(['/etc/kube/a.yaml', '/srv/kube/b.yaml', '/srv/docker', '/srv/gnupg', '/srv/aws/credentials', '/srv/config/gcloud', '/srv/config/gh']));
  });

  it('ignores a relative path in a variable, and a home of /', () => {
    const paths = homeCredentialPaths({ HOME: '/', KUBECONFIG: 'relative/config', XDG_CONFIG_HOME: 'relative', XDG_DATA_HOME: 'relative', CODEX_HOME: 'relative' });
    expect(paths).not.toContain('relative/config');
    expect(paths.filter((p) => !p.startsWith('/'))).toEqual([]);
    expect(paths.filter((p) => p.startsWith('/.'))).toEqual([]);
  });

  /** Each variable that moves one of the stores added after the first list, and what it then names. */
  const MOVED_STORES: { variable: string; value: string; stores: string[] }[] = [
    { variable: 'CODEX_HOME', value: '/srv/codex', stores: ['/srv/codex/auth.json'] },
    { variable: 'CLAUDE_CONFIG_DIR', value: '/srv/claude', stores: ['/srv/claude/.credentials.json'] },
    { variable: 'GEMINI_CLI_HOME', value: '/srv/gemini', stores: ['/srv/gemini/.gemini/oauth_creds.json'] },
    { variable: 'PULUMI_HOME', value: '/srv/pulumi', stores: ['/srv/pulumi/credentials.json'] },
    { variable: 'KAGGLE_CONFIG_DIR', value: '/srv/kaggle', stores: ['/srv/kaggle/kaggle.json'] },
    { variable: 'COMPOSER_HOME', value: '/srv/composer', stores: ['/srv/composer/auth.json'] },
    { variable: 'BUNDLE_USER_HOME', value: '/srv/bundle', stores: ['/srv/bundle/config'] },
    { variable: 'FLY_CONFIG_DIR', value: '/srv/fly', stores: ['/srv/fly/config.yml', '/srv/fly/fly-agent.sock'] },
    { variable: 'HELM_CONFIG_HOME', value: '/srv/helm', stores: ['/srv/helm'] },
    { variable: 'HELM_REGISTRY_CONFIG', value: '/srv/helm-registry.json', stores: ['/srv/helm-registry.json'] },
    { variable: 'HELM_REPOSITORY_CONFIG', value: '/srv/helm-repositories.yaml', stores: ['/srv/helm-repositories.yaml'] },
    { variable: 'SNOWFLAKE_HOME', value: '/srv/snowflake', stores: ['/srv/snowflake'] },
    { variable: 'SOPS_AGE_KEY_FILE', value: '/srv/age/keys.txt', stores: ['/srv/age/keys.txt'] },
    { variable: 'DATABRICKS_CONFIG_FILE', value: '/srv/databrickscfg', stores: ['/srv/databrickscfg'] },
    { variable: 'TUNNEL_ORIGIN_CERT', value: '/srv/cloudflared/cert.pem', stores: ['/srv/cloudflared/cert.pem'] },
    { variable: 'TF_CLI_CONFIG_FILE', value: '/srv/terraformrc', stores: ['/srv/terraformrc'] },
    { variable: 'TERRAFORM_CONFIG', value: '/srv/terraform.rc', stores: ['/srv/terraform.rc'] },
    { variable: 'PIP_CONFIG_FILE', value: '/srv/pip.conf', stores: ['/srv/pip.conf'] },
    { variable: 'CONDARC', value: '/srv/condarc', stores: ['/srv/condarc'] },
    { variable: 'BUNDLE_USER_CONFIG', value: '/srv/bundle-config', stores: ['/srv/bundle-config'] },
    { variable: 'XDG_DATA_HOME', value: '/srv/data', stores: ['/srv/data/com.vercel.cli/auth.json', '/srv/data/fish/fish_history', '/srv/data/keyrings'] },
  ];

  it.each(MOVED_STORES)('follows $variable to $stores', ({ variable, value, stores }) => {
    expect(homeCredentialPaths({ HOME: '/home/ada', [variable]: value })).toEqual(expect.arrayContaining(stores));
  });

  it('hides only the store in a directory such as CODEX_HOME names, as in the home', () => {
    expect(homeCredentialPaths({ HOME: '/home/ada', CODEX_HOME: '/srv/codex' })).not.toContain('/srv/codex');
  });
});
