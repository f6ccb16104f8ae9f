/**
 * What the tool sandbox binds back into the empty /run every sandbox gets:
 * a program dir there (an allowlisted binary, a PATH entry; NixOS keeps its
 * system's under /run/current-system) and the resolver's file when
 * /etc/resolv.conf links there (systemd-resolved). Nothing else of /run.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { homeCredentialPaths } from '../../../runtime/exec/home-credentials.ts';
import { probeSandbox } from '../../../runtime/exec/sandbox-probe.ts';
import { installToolSandbox, resolverInPrivateMounts, toolProcessCommand, uninstallToolSandbox } from '../../../runtime/exec/tool-sandbox.ts';
import { tempDir } from '../../helpers/project.ts';

// The suite runs as root here (like the CI), so it may make what a system keeps under /run.
const run = join('/run', `forge-tool-sandbox-${process.pid}`);

beforeAll(async () => {
  const probe = await probeSandbox();
  expect(probe.isolation, probe.reason).toBe('bubblewrap');
  mkdirSync(join(run, 'sw', 'bin'), { recursive: true });
  writeFileSync(join(run, 'sw', 'bin', 'hello-from-run'), '#!/bin/sh\necho hello from run\n', { mode: 0o755 });
  writeFileSync(join(run, 'resolv.conf'), 'nameserver 127.0.0.53\n');
  writeFileSync(join(run, 'secret'), 'not for tools\n');
  installToolSandbox(probe, { mode: 'auto' }, tempDir());
});


afterAll(() => {
  uninstallToolSandbox();
  rmSync(run, { recursive: true, force: true });
});

/** The mount flags of `args` whose target is `path` (--tmpfs P, --bind P P, --ro-bind P P, ...). */
function mountsAt(args: readonly string[], path: string): string[] {
  return args.flatMap((flag, i) => (flag === '--tmpfs' && args[i + 1] === path) || (/^--(ro-)?bind$/.test(flag) && args[i + 2] === path) ? [flag] : []);
}

const sandboxed = (command: string, args: string[], env: Record<string, string>) => {
  const { command: argv0, args: argv } = toolProcessCommand(command, args, { cwd: '/', env });
  return execFileSync(argv0, argv, { encoding: 'utf8', env: { ...process.env, ...env } }).trim();
};

describe('the empty /run of a tool process', () => {
  it('keeps a PATH entry under /run, and only that', () => {
    const path = `${join(run, 'sw', 'bin')}:/usr/bin:/bin`;
    expect(sandboxed('sh', ['-c', `hello-from-run; ls ${run}; cat ${join(run, 'secret')} 2>/dev/null || echo no secret`], { PATH: path })).toBe('hello from run\nsw\nno secret');
  });

  it('keeps an allowlisted binary resolved under /run', () => {
    expect(sandboxed(join(run, 'sw', 'bin', 'hello-from-run'), [], { PATH: '/usr/bin:/bin' })).toBe('hello from run');
  });

  it('keeps the resolver\'s file when /etc/resolv.conf links into /run', () => {
    const link = join(tempDir(), 'resolv.conf');
    symlinkSync(join(run, 'resolv.conf'), link);
    expect(resolverInPrivateMounts(link)).toEqual([join(run, 'resolv.conf')]);
    // A plain file, or a link that stays out of /run, needs nothing bound back.
    const plain = join(tempDir(), 'resolv.conf');
    writeFileSync(plain, 'nameserver 127.0.0.1\n');
    expect(resolverInPrivateMounts(plain)).toEqual([]);
    expect(resolverInPrivateMounts(join(tempDir(), 'missing'))).toEqual([]);
  });
});

describe('the credential stores of the agent\'s home', () => {
  it('are hidden from every tool process, except one that holds the work dir', async () => {
    // Outside /tmp: a home under it would be hidden whole by the sandbox's own /tmp.
    const home = tempDir('forge-home-', '/var/tmp');
    const workDir = join(home, '.docker', 'project');
    mkdirSync(workDir, { recursive: true });
    mkdirSync(join(home, '.ssh'));
    writeFileSync(join(home, '.netrc'), 'machine example.com password hunter2\n');
    vi.stubEnv('HOME', home);
    try {
      installToolSandbox(await probeSandbox(), { mode: 'auto' }, workDir);
      const { args } = toolProcessCommand('sh', ['-c', 'true'], { cwd: workDir });
      const mounted = args.join(' ');
      expect(mounted).toContain(`--tmpfs ${join(home, '.ssh')} `);
      expect(mounted).toContain(`--ro-bind /dev/null ${join(home, '.netrc')} `);
      // Hiding .docker would hide the work dir inside it: no mount of any kind there.
      expect(mountsAt(args, join(home, '.docker'))).toEqual([]);
      // Stores that do not exist are not mounted over.
      expect(mounted).not.toContain(join(home, '.aws'));
    } finally {
      vi.unstubAllEnvs();
      installToolSandbox(await probeSandbox(), { mode: 'auto' }, tempDir());
    }
  });
});

/**
 * The stores added to home-credentials.ts after its first list, each with a
 * file as the tool would find it (inside the store when the store is a
 * directory): every one must be unreadable from a tool process, so dropping
 * an entry from the list fails here.
 */
const ADDED_STORES: { store: string; file: string }[] = [
  ...['.terraformrc', '.pulumi/credentials.json', '.config/sops/age/keys.txt', '.databrickscfg', '.kaggle/kaggle.json', '.config/kaggle/kaggle.json'],
  ...['.config/configstore/firebase-tools.json', '.netlify/config.json', '.config/netlify/config.json', '.local/share/com.vercel.cli/auth.json', '.fly/config.yml'],
  ...['.wrangler/config/default.toml', '.config/.wrangler/config/default.toml', '.railway/config.json', '.supabase/access-token', '.circleci/cli.yml', '.sentryclirc'],
  ...['.config/stripe/config.toml', '.config/ngrok/ngrok.yml', '.ngrok2/ngrok.yml', '.claude/.credentials.json', '.codex/auth.json', '.gemini/oauth_creds.json'],
  ...['.pip/pip.conf', '.config/pip/pip.conf', '.condarc', '.composer/auth.json', '.config/composer/auth.json', '.bundle/config', '.m2/settings-security.xml'],
].map((file) => ({ store: file, file }))
  .concat([
    { store: '.config/openstack', file: '.config/openstack/clouds.yaml' },
    { store: '.config/hcloud', file: '.config/hcloud/cli.toml' },
    { store: '.config/linode-cli', file: '.config/linode-cli/linode-cli' },
    { store: '.config/helm', file: '.config/helm/repositories.yaml' },
    { store: '.snowflake', file: '.snowflake/connections.toml' },
    { store: '.config/snowflake', file: '.config/snowflake/config.toml' },
    { store: '.cloudflared', file: '.cloudflared/cert.pem' },
    { store: '.config/github-copilot', file: '.config/github-copilot/apps.json' },
  ]);

describe('the credential stores added to the list', () => {
  it.each(ADDED_STORES)('$store is on it', ({ store }) => {
    expect(homeCredentialPaths({ HOME: '/home/ada' })).toContain(`/home/ada/${store}`);
  });

  it('are each unreadable from a tool process, and so is flyctl\'s agent socket', async () => {
    const home = tempDir('forge-home-', '/var/tmp');
    for (const { file } of ADDED_STORES) {
      mkdirSync(dirname(join(home, file)), { recursive: true });
      writeFileSync(join(home, file), `secret of ${file}\n`);
    }
    const flyAgent = createNetServer();
    await new Promise<void>((resolve) => flyAgent.listen(join(home, '.fly', 'fly-agent.sock'), resolve));
    vi.stubEnv('HOME', home);
    try {
      installToolSandbox(await probeSandbox(), { mode: 'auto' }, tempDir());
      // A hidden file reads as empty (/dev/null over it), one in a hidden directory not at all: either way, nothing.
      const script = [...ADDED_STORES.map(({ file }) => `echo "${file}:$(cat ${join(home, file)} 2>/dev/null)"`), `[ -S ${join(home, '.fly', 'fly-agent.sock')} ] && echo "agent socket reachable" || true`].join('; ');
      const { command, args } = toolProcessCommand('sh', ['-c', script], { cwd: '/' });
      expect(execFileSync(command, args, { encoding: 'utf8' }).trim().split('\n')).toEqual(ADDED_STORES.map(({ file }) => `${file}:`));
    } finally {
      vi.unstubAllEnvs();
      flyAgent.close();
      installToolSandbox(await probeSandbox(), { mode: 'auto' }, tempDir());
    }
  });
});

/**
 * A variable for each store added to the list that a user can move, set to a
 * place outside the home (value), and a file there as the tool would find it.
 */
const MOVED_STORES: { variable: string; value: string; file: string }[] = [
  { variable: 'CODEX_HOME', value: 'codex', file: 'codex/auth.json' },
  { variable: 'CLAUDE_CONFIG_DIR', value: 'claude', file: 'claude/.credentials.json' },
  { variable: 'GEMINI_CLI_HOME', value: 'gemini', file: 'gemini/.gemini/oauth_creds.json' },
  { variable: 'PULUMI_HOME', value: 'pulumi', file: 'pulumi/credentials.json' },
  { variable: 'KAGGLE_CONFIG_DIR', value: 'kaggle', file: 'kaggle/kaggle.json' },
  { variable: 'COMPOSER_HOME', value: 'composer', file: 'composer/auth.json' },
  { variable: 'BUNDLE_USER_HOME', value: 'bundle', file: 'bundle/config' },
  { variable: 'FLY_CONFIG_DIR', value: 'fly', file: 'fly/config.yml' },
  { variable: 'HELM_CONFIG_HOME', value: 'helm', file: 'helm/repositories.yaml' },
  { variable: 'HELM_REGISTRY_CONFIG', value: 'helm-registry.json', file: 'helm-registry.json' },
  { variable: 'HELM_REPOSITORY_CONFIG', value: 'helm-repositories.yaml', file: 'helm-repositories.yaml' },
  { variable: 'SNOWFLAKE_HOME', value: 'snowflake', file: 'snowflake/connections.toml' },
  { variable: 'SOPS_AGE_KEY_FILE', value: 'age-keys.txt', file: 'age-keys.txt' },
  { variable: 'DATABRICKS_CONFIG_FILE', value: 'databrickscfg', file: 'databrickscfg' },
  { variable: 'TUNNEL_ORIGIN_CERT', value: 'cert.pem', file: 'cert.pem' },
  { variable: 'TF_CLI_CONFIG_FILE', value: 'terraformrc', file: 'terraformrc' },
  { variable: 'TERRAFORM_CONFIG', value: 'terraform.rc', file: 'terraform.rc' },
  { variable: 'PIP_CONFIG_FILE', value: 'pip.conf', file: 'pip.conf' },
  { variable: 'CONDARC', value: 'condarc', file: 'condarc' },
  { variable: 'BUNDLE_USER_CONFIG', value: 'bundle-config', file: 'bundle-config' },
  { variable: 'XDG_DATA_HOME', value: 'data', file: 'data/com.vercel.cli/auth.json' },
  { variable: 'XDG_DATA_HOME', value: 'data', file: 'data/fish/fish_history' },
];

describe('the credential stores a variable moves out of the home', () => {
  it('are each unreadable from a tool process where the variable points', async () => {
    // Outside /tmp, like the home above: the sandbox's own /tmp would hide them whatever the list says.
    const moved = tempDir('forge-moved-', '/var/tmp');
    for (const { variable, value, file } of MOVED_STORES) {
      mkdirSync(dirname(join(moved, file)), { recursive: true });
      writeFileSync(join(moved, file), `secret of ${variable}\n`);
      vi.stubEnv(variable, join(moved, value));
    }
    try {
      installToolSandbox(await probeSandbox(), { mode: 'auto' }, tempDir());
      const script = MOVED_STORES.map(({ variable, file }) => `echo "${variable} ${file}:$(cat ${join(moved, file)} 2>/dev/null)"`).join('; ');
      const { command, args } = toolProcessCommand('sh', ['-c', script], { cwd: '/' });
      expect(execFileSync(command, args, { encoding: 'utf8' }).trim().split('\n')).toEqual(MOVED_STORES.map(({ variable, file }) => `${variable} ${file}:`));
    } finally {
      vi.unstubAllEnvs();
      installToolSandbox(await probeSandbox(), { mode: 'auto' }, tempDir());
    }
  });
});

describe('the work dir\'s repository', () => {
  /** Runs `check` with the sandbox installed for a fresh repository as the work dir. */
  async function inRepository(check: (workDir: string) => void): Promise<void> {
    const workDir = tempDir();
    execFileSync('git', ['init', '--quiet', workDir]);
    installToolSandbox(await probeSandbox(), { mode: 'auto' }, workDir);
    try {
      check(workDir);
    } finally {
      installToolSandbox(await probeSandbox(), { mode: 'auto' }, tempDir());
    }
  }

  it('still takes commits from a tool (objects, refs, index); its config and hooks are read-only', async () => {
    await inRepository((workDir) => {
      const script = [
        'echo hi > a.txt',
        'git -c user.name=t -c user.email=t@example.com add a.txt',
        'git -c user.name=t -c user.email=t@example.com commit --quiet -m first',
        'git log --format=%s',
        'git config user.name someone 2>/dev/null || echo config refused',
        'echo "#!/bin/sh" > .git/hooks/pre-commit 2>/dev/null || echo hook refused',
        // Moved aside, the next process would start without them bound read-only (their binds are --*-bind-try).
        'mv .git/config .git/config.aside 2>/dev/null || echo config move refused',
        'mv .git/hooks .git/hooks.aside 2>/dev/null || echo hooks move refused',
      ].join(' && ');
      const { command, args } = toolProcessCommand('sh', ['-c', script], { cwd: workDir });
      expect(execFileSync(command, args, { encoding: 'utf8' }).trim()).toBe('first\nconfig refused\nhook refused\nconfig move refused\nhooks move refused');
      expect(execFileSync('git', ['-C', workDir, 'log', '--format=%s'], { encoding: 'utf8' }).trim()).toBe('first');
    });
  });

  it('does not keep a process from starting when it is gone between the policy and bwrap (another tool deleted it)', async () => {
    await inRepository((workDir) => {
      const { command, args } = toolProcessCommand('sh', ['-c', 'echo started'], { cwd: workDir });
      rmSync(join(workDir, '.git'), { recursive: true, force: true });
      expect(execFileSync(command, args, { encoding: 'utf8' }).trim()).toBe('started');
    });
  });
});

describe('sandbox.visible in forge.yaml', () => {
  it('leaves the credential stores it names readable, and only those', async () => {
    const home = tempDir('forge-home-', '/var/tmp');
    mkdirSync(join(home, '.kube'));
    writeFileSync(join(home, '.kube', 'config'), 'clusters: []\n');
    mkdirSync(join(home, '.ssh'));
    vi.stubEnv('HOME', home);
    try {
      installToolSandbox(await probeSandbox(), { mode: 'auto', visible: ['~/.kube'] }, tempDir());
      const { command, args } = toolProcessCommand('sh', ['-c', `cat ${join(home, '.kube', 'config')}; ls -A ${join(home, '.ssh')} | wc -l`], { cwd: '/' });
      expect(args.join(' ')).toContain(`--tmpfs ${join(home, '.ssh')} `);
      expect(execFileSync(command, args, { encoding: 'utf8' }).trim()).toBe('clusters: []\n0');
    } finally {
      vi.unstubAllEnvs();
      installToolSandbox(await probeSandbox(), { mode: 'auto' }, tempDir());
    }
  });
});

describe('links where the sandbox hides or protects something', () => {
  it('hides what an absolute link in the home names, and starts when one leads to /dev/null', async () => {
    const home = tempDir('forge-home-', '/var/tmp');
    const elsewhere = tempDir('forge-aws-', '/var/tmp');
    writeFileSync(join(elsewhere, 'credentials'), 'AWS-SECRET\n');
    symlinkSync(elsewhere, join(home, '.aws'));
    symlinkSync('/dev/null', join(home, '.bash_history'));
    vi.stubEnv('HOME', home);
    try {
      installToolSandbox(await probeSandbox(), { mode: 'auto' }, tempDir());
      const { command, args } = toolProcessCommand('sh', ['-c', `cat ${join(home, '.aws', 'credentials')} 2>/dev/null || echo hidden`], { cwd: '/' });
      expect(execFileSync(command, args, { encoding: 'utf8' }).trim()).toBe('hidden');
    } finally {
      vi.unstubAllEnvs();
      installToolSandbox(await probeSandbox(), { mode: 'auto' }, tempDir());
    }
  });

  it('never binds what a link at .git/config or .git/hooks names (the hidden state included)', async () => {
    const workDir = tempDir('forge-work-', '/var/tmp');
    execFileSync('git', ['init', '--quiet', workDir]);
    mkdirSync(join(workDir, '.forge', 'sessions'), { recursive: true });
    writeFileSync(join(workDir, '.forge', 'sessions', 'other.json'), 'SESSION-SECRET');
    rmSync(join(workDir, '.git', 'hooks'), { recursive: true });
    // What a tool process could leave for the next one: links that a read-only bind would follow.
    symlinkSync('../.forge', join(workDir, '.git', 'hooks'));
    installToolSandbox(await probeSandbox(), { mode: 'auto' }, workDir);
    try {
      const { command, args } = toolProcessCommand('sh', ['-c', `cat ${join(workDir, '.forge', 'sessions', 'other.json')} 2>/dev/null || echo hidden; mv .git .git-moved 2>/dev/null || echo kept`], { cwd: workDir });
      expect(execFileSync(command, args, { encoding: 'utf8' }).trim()).toBe('hidden\nkept');
    } finally {
      installToolSandbox(await probeSandbox(), { mode: 'auto' }, tempDir());
    }
  });

  it('shows a program dir under /run, never /run or a user\'s runtime dir whole', () => {
    const { args } = toolProcessCommand('sh', ['-c', 'true'], { cwd: '/', env: { PATH: `/run:/run/user/0:/tmp:${join(run, 'sw', 'bin')}:/usr/bin:/bin` } });
    const bound = args.join(' ');
    // Each whole dir gets only the empty tmpfs every sandbox puts there, no bind of any kind.
    for (const whole of ['/run', '/run/user/0', '/tmp']) expect(mountsAt(args, whole).filter((flag) => flag !== '--tmpfs')).toEqual([]);
    expect(bound).toContain(`--ro-bind ${join(run, 'sw', 'bin')} ${join(run, 'sw', 'bin')} `);
  });
});

describe('root in the sandbox', () => {
  it('still writes a work dir another user owns (docker run -v $PWD:/w as root)', async () => {
    expect(process.getuid?.(), 'the suite runs as root here, like the CI').toBe(0);
    const workDir = tempDir();
    chownSync(workDir, 65534, 65534);
    chmodSync(workDir, 0o755);
    installToolSandbox(await probeSandbox(), { mode: 'auto' }, workDir);
    try {
      const { command, args } = toolProcessCommand('sh', ['-c', 'echo ok > written.txt && cat written.txt'], { cwd: workDir });
      expect(execFileSync(command, args, { encoding: 'utf8' }).trim()).toBe('ok');
    } finally {
      installToolSandbox(await probeSandbox(), { mode: 'auto' }, tempDir());
    }
  });
});

describe('the submodules of the work dir\'s repository', () => {
  it('keep their config and hooks read-only too (git status runs a git in each)', async () => {
    const workDir = tempDir();
    execFileSync('git', ['init', '--quiet', workDir]);
    // A submodule's git dir, as `git submodule add` keeps it (its name may hold a slash).
    const module = join(workDir, '.git', 'modules', 'libs', 'core');
    mkdirSync(join(module, 'hooks'), { recursive: true });
    writeFileSync(join(module, 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(module, 'config'), '[core]\n\tbare = false\n');
    installToolSandbox(await probeSandbox(), { mode: 'auto' }, workDir);
    try {
      const script = `echo "[core] fsmonitor = x" >> ${join(module, 'config')} 2>/dev/null || echo config refused; touch ${join(module, 'hooks', 'pre-commit')} 2>/dev/null || echo hook refused`;
      const { command, args } = toolProcessCommand('sh', ['-c', script], { cwd: workDir });
      expect(execFileSync(command, args, { encoding: 'utf8' }).trim()).toBe('config refused\nhook refused');
    } finally {
      installToolSandbox(await probeSandbox(), { mode: 'auto' }, tempDir());
    }
  });
});
