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
    const paths = homeCredentialPaths({ HOME: '/', KUBECONFIG: 'relative/config', XDG_CONFIG_HOME: 'relative' });
    expect(paths).not.toContain('relative/config');
    expect(paths.filter((p) => p.startsWith('/.'))).toEqual([]);
  });
});
