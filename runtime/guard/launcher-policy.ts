/**
 * The launcher policy: programs that can execute other programs through
 * their arguments, configuration or URLs, and exactly which of those uses
 * cli_execute refuses. One declarative row per program (or family); the
 * matcher in launcher-check.ts reads it, and `forge tool describe
 * cli_execute` shows it.
 *
 * Option rules match every spelling a getopt-style program accepts: a long
 * option also when abbreviated (`--upload-p`) or joined to its value with
 * "=", a short option also inside a cluster (`-avze`) or with its value
 * attached (`-Iprog`).
 */

export interface OptionRule {
  /** Long option names, without the leading "--"; any abbreviation of them matches too. */
  long?: string[];
  /** Single-letter options (also inside a cluster such as -xzf). */
  short?: string[];
  /** Options spelled with one dash and matched exactly (find's -exec, node's --eval is long). */
  exact?: string[];
  why: string;
}

const AWK_OPTIONS: OptionRule[] = [{ short: ['f', 'E', 'i', 'l', 'W'], long: ['file', 'exec', 'include', 'load'], why: 'reads the program (or a library) from a file the check cannot see' }];
// gawk opens an input file named /inet/tcp/... as a network connection.
const AWK_OPERANDS = [{ pattern: '^/inet[46]?/', why: 'gawk reads /inet/... as a network connection' }];

export type ScriptLanguage = 'awk' | 'sed';

export interface ProgramPolicy {
  /** Names the row applies to (the requested name, and the name of the binary after symlinks). */
  programs: string[];
  /** How the program can run others: what the row is about. */
  runs: string;
  /** Refused whatever its arguments (it cannot be used without running something we cannot check). */
  refused?: boolean;
  /** Options refused anywhere before a "--". */
  options?: OptionRule[];
  /** git-style subcommands: the first operand; a subcommand refused outright, or options refused only after it. */
  subcommands?: Record<string, OptionRule[] | 'refused'>;
  /** Operands refused, by pattern (URLs that name a program, remote "host:path" forms). */
  operands?: { pattern: string; why: string }[];
  /** The program runs the command named by an operand (after its own options and `leading` operands such as timeout's duration): that command is checked like one given directly. */
  wrapper?: { valueOptions: string[]; assignments?: boolean; leading?: number };
  /** Options end at the first operand (an interpreter's script gets the rest); otherwise they count anywhere before "--". */
  optionsEndAtOperand?: boolean;
  /** The first argument is a cluster of options even without a dash (tar xvf). */
  bundledFirstArg?: boolean;
  /** The program's own language can run commands: its script text is scanned. */
  script?: ScriptLanguage;
  /** Environment set for every run (after env_passthrough, so it wins). */
  env?: Record<string, string>;
  /** Arguments put before the caller's (settings the caller cannot undo). */
  prependArgs?: string[];
  /** What the allowlist still cannot control for this program. */
  limits?: string;
}

/** Config keys `git -c` may set: presentation only. Every other key may name a program, so it is refused. */
export const GIT_SAFE_CONFIG_KEYS = /^(color\.[a-z.]+|user\.(name|email)|core\.(quotepath|autocrlf|safecrlf|abbrev|ignorecase|eol|whitespace)|log\.[a-z]+|advice\.[a-z]+|init\.defaultbranch|diff\.(renames|noprefix|mnemonicprefix|algorithm|context|statgraph|indentheuristic|relative)|status\.[a-z]+|column\.[a-z]+|i18n\.[a-z]+|format\.pretty|grep\.(linenumber|patterntype|extendedregexp|column|fullname)|pull\.(rebase|ff)|merge\.(ff|conflictstyle)|commit\.(verbose|status)|tag\.sort|branch\.sort|safe\.directory)$/i;

/**
 * Config keys (lower case) whose value names a program git runs. Forge refuses
 * to run git in a repository whose configuration (the work dir's .git/config
 * and what it includes: files any write tool could have written), or that of
 * a repository nested in it, sets one. (tar.<format>.command: git archive's
 * compressor; interactive.diffFilter: add -p; hook.<name>.command:
 * config-defined hooks of newer gits.)
 */
export const GIT_PROGRAM_KEYS =
  /^(alias\..+|core\.(fsmonitor|sshcommand|pager|editor|hookspath|askpass|gitproxy|alternaterefscommand)|credential\..*helper|diff\.external|(diff|merge|filter)\..+\.(textconv|command|driver|clean|smudge|process)|(merge|diff)tool\..+\.(cmd|path)|gpg(\..+)?\.program|sequence\.editor|pager\..+|uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack|vcs|proxy)|url\..+\.(insteadof|pushinsteadof)|submodule\..+\.update|(web\.browser|browser\..+\.(cmd|path)|man\..+\.(cmd|path)|instaweb\..+)|sendemail\..+|ssh\.variant|protocol\..*allow|receive\.procreceiverefs|include(if\..+)?\.path|tar\..+\.command|interactive\.difffilter|gpg\.ssh\.defaultkeycommand|imap\.tunnel|hook\..+\.command|guitool\..+\.cmd)$/;

/** Protocols git may use: none that runs a local program (ssh runs ssh, ext:: any command, fd:: inherits descriptors). */
export const GIT_ALLOWED_PROTOCOLS = 'file:git:http:https';

const SHELL_STRING = 'runs its argument through sh -c';

export const LAUNCHER_POLICY: readonly ProgramPolicy[] = [
  {
    programs: ['git'],
    runs: 'aliases starting with "!", config keys naming programs (core.fsmonitor, core.sshCommand, core.pager, core.editor, core.hooksPath, credential helpers, diff/merge/filter drivers ...), --upload-pack/--receive-pack/--exec, the ext:: and ssh transports, hooks',
    options: [{ long: ['config-env', 'exec-path'], why: 'sets configuration from the environment, or the directory git runs its helpers from' }],
    subcommands: {
      clone: [{ long: ['upload-pack', 'template', 'config'], short: ['u', 'c'], why: 'names a program (or hooks, or config) for the clone to run' }],
      fetch: [{ long: ['upload-pack'], why: 'names the program to run for the remote side' }],
      pull: [{ long: ['upload-pack'], why: 'names the program to run for the remote side' }],
      'ls-remote': [{ long: ['upload-pack'], why: 'names the program to run for the remote side' }],
      push: [{ long: ['receive-pack', 'exec'], why: 'names the program to run for the remote side' }],
      'send-pack': [{ long: ['receive-pack', 'exec'], why: 'names the program to run for the remote side' }],
      'fetch-pack': [{ long: ['upload-pack', 'exec'], why: 'names the program to run for the remote side' }],
      archive: [{ long: ['exec', 'remote'], why: 'runs a program for a remote archive' }],
      rebase: [{ long: ['exec'], short: ['x'], why: 'runs a command after each commit' }],
      grep: [{ long: ['open-files-in-pager'], short: ['O'], why: 'runs a pager program' }],
      help: [{ long: ['web', 'man', 'info'], short: ['w', 'm', 'i'], why: 'runs a browser or viewer' }],
      bisect: 'refused',
      difftool: 'refused',
      mergetool: 'refused',
      'filter-branch': 'refused',
      'filter-repo': 'refused',
      instaweb: 'refused',
      'web--browse': 'refused',
      'send-email': 'refused',
      daemon: 'refused',
      shell: 'refused',
      'fsmonitor--daemon': 'refused',
      maintenance: 'refused', // start/register: crontab or systemd timers that run git after the call, outside every guard
      'credential-cache': 'refused',
      'credential-store': 'refused',
      credential: 'refused',
      'upload-pack': 'refused',
      'receive-pack': 'refused',
      'remote-ext': 'refused',
      'remote-fd': 'refused',
      'submodule': [{ long: ['reference'], why: 'submodule commands run configured update commands' }],
    },
    operands: [
      { pattern: '(^|=)(ext|fd)::', why: 'the ext:: and fd:: transports run a command or use inherited descriptors' },
      { pattern: '^(ssh|git\\+ssh|ssh\\+git)://', why: 'the ssh transport runs ssh, with whatever its configuration says' },
    ],
    env: {
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_ALLOW_PROTOCOL: GIT_ALLOWED_PROTOCOLS,
      GIT_PROTOCOL_FROM_USER: '0',
      GIT_TERMINAL_PROMPT: '0',
      GIT_PAGER: 'cat',
      PAGER: 'cat',
      GIT_EDITOR: 'false',
      GIT_ASKPASS: '',
      SSH_ASKPASS: '',
      // Command-line config (read last, so it wins over the repository's): hooks and fsmonitor off, no pager or editor, no credential helper.
      // help.autocorrect off: with it, `git bisectt run ...` would run `git bisect run ...`, a subcommand the policy refuses.
      GIT_CONFIG_COUNT: '7',
      GIT_CONFIG_KEY_0: 'core.hooksPath',
      GIT_CONFIG_VALUE_0: '/dev/null',
      GIT_CONFIG_KEY_1: 'core.fsmonitor',
      GIT_CONFIG_VALUE_1: 'false',
      GIT_CONFIG_KEY_2: 'core.pager',
      GIT_CONFIG_VALUE_2: 'cat',
      GIT_CONFIG_KEY_3: 'core.editor',
      GIT_CONFIG_VALUE_3: 'false',
      GIT_CONFIG_KEY_4: 'credential.helper',
      GIT_CONFIG_VALUE_4: '',
      GIT_CONFIG_KEY_5: 'sequence.editor',
      GIT_CONFIG_VALUE_5: 'false',
      GIT_CONFIG_KEY_6: 'help.autocorrect',
      GIT_CONFIG_VALUE_6: '0',
    },
    limits: 'system and global config are off and only the file, git, http and https transports are allowed (ssh is not: it would run ssh). The repository\'s own config is read by git on every run, and a nested repository\'s (a submodule\'s) by the git it starts there, so Forge reads each first and refuses to run git while one sets any key that names a program; `git -c` may set presentation keys only.',
  },
  {
    programs: ['find'],
    runs: '-exec/-execdir/-ok/-okdir run a command; -fprint*/-fls write files anywhere; -delete removes files anywhere',
    options: [{ exact: ['-exec', '-execdir', '-ok', '-okdir', '-fprint', '-fprint0', '-fprintf', '-fls', '-delete'], why: 'runs a command, or writes or deletes files outside the tool\'s control' }],
  },
  { programs: ['xargs'], runs: 'runs a command with arguments read from its input, which no check can see beforehand', refused: true },
  ...wrappers([
    [['env'], ['-u', '--unset', '-C', '--chdir'], 0],
    [['timeout'], ['-s', '--signal', '-k', '--kill-after'], 1],
    [['nice'], ['-n', '--adjustment'], 0],
    [['ionice'], ['-c', '--class', '-n', '--classdata', '-p', '--pid', '-P', '--pgid', '-u', '--uid'], 0],
    [['stdbuf'], ['-i', '--input', '-o', '--output', '-e', '--error'], 0],
    [['time'], ['-o', '--output', '-f', '--format'], 0],
    [['nohup', 'setsid'], [], 0],
  ]),
  {
    programs: ['watch', 'flock', 'sudo', 'doas', 'su', 'runuser', 'chroot', 'unshare', 'nsenter', 'strace', 'ltrace', 'script', 'parallel', 'chrt', 'taskset', 'prlimit', 'systemd-run', 'expect', 'dbus-launch', 'setpriv', 'capsh', 'firejail', 'bwrap', 'ssh-agent', 'gdb', 'lldb', 'valgrind', 'perf', 'busybox', 'toybox'],
    runs: `runs a command (some ${SHELL_STRING}, some change user, namespace or tracing)`,
    refused: true,
  },
  {
    // Before awk's row, so an awk that is gawk (the alternatives link) is matched here by its real name.
    programs: ['gawk'],
    runs: 'system() and indirect calls (@f()), pipes to and from commands (print | "cmd", "cmd" | getline, |&), output redirection to files, @load/@include, /inet connections, program files',
    options: AWK_OPTIONS,
    operands: AWK_OPERANDS,
    script: 'awk',
    // gawk's own sandbox refuses system(), every redirection and extensions however they are spelled: a second wall behind the scan.
    prependArgs: ['--sandbox'],
    limits: 'gawk runs with --sandbox, so getline < file is refused too.',
  },
  {
    programs: ['awk', 'mawk', 'nawk', 'original-awk'],
    runs: 'system(), pipes to and from commands (print | "cmd", "cmd" | getline, |&), output redirection to files, @load/@include and @f() in gawk, program files',
    options: AWK_OPTIONS,
    operands: AWK_OPERANDS,
    script: 'awk',
  },
  {
    programs: ['sed', 'gsed'],
    runs: 'the e command and the s///e flag run commands; w/W and s///w write files; script files',
    options: [{ short: ['f'], long: ['file'], why: 'reads the script from a file the check cannot see' }],
    script: 'sed',
  },
  {
    programs: ['tar', 'gtar', 'bsdtar'],
    runs: '--to-command, --use-compress-program/-I, --checkpoint-action=exec, --rsh-command, --rmt-command, --info-script/--new-volume-script/-F, remote archives (host:file)',
    options: [
      { short: ['I', 'F'], long: ['to-command', 'use-compress-program', 'checkpoint-action', 'rsh-command', 'rmt-command', 'info-script', 'new-volume-script', 'index-file'], why: 'runs a program' },
    ],
    operands: [{ pattern: '^[^/=-][^/=]*:', why: 'a "host:file" archive is reached by running rsh/ssh' }],
    bundledFirstArg: true,
  },
  {
    programs: ['rsync'],
    runs: '-e/--rsh, --rsync-path, --remote-option/-M, remote "host:path" forms (which run ssh)',
    options: [{ short: ['e', 'M'], long: ['rsh', 'rsync-path', 'remote-option', 'daemon', 'config', 'write-batch', 'read-batch', 'only-write-batch'], why: 'runs a program on this or the remote side' }],
    operands: [{ pattern: '^(?!rsync://)[^/:]+:', why: 'a "host:path" form runs ssh' }],
  },
  {
    programs: ['ssh', 'scp', 'sftp', 'slogin'],
    runs: '-o ProxyCommand/LocalCommand/KnownHostsCommand and a config file (HOME is the work dir, so ~/.ssh/config is a file the agent can write), -S/-D programs, the remote command',
    options: [{ short: ['o', 'F', 'S', 'D', 'J'], why: 'sets an option, config file or program ssh runs locally' }],
    prependArgs: ['-F', '/dev/null'],
    limits: 'ssh always runs its remote command on the remote host; allow it only where that is the point.',
  },
  {
    programs: ['make', 'gmake', 'bmake', 'ninja', 'cmake'],
    runs: 'runs the recipes of the Makefile (build file) in the work dir through a shell',
    options: [{ short: ['E', 'f', 'C', 'I'], long: ['eval', 'file', 'makefile', 'directory', 'include-dir'], why: 'runs code or reads a build file from elsewhere' }],
    operands: [{ pattern: '^(SHELL|\\.SHELLFLAGS|MAKEFLAGS|MAKE|MAKESHELL)=', why: 'changes the shell or flags make runs recipes with' }],
    limits: 'a build file in the work dir is a program: the allowlist cannot control what its recipes do (the sandbox can).',
  },
  {
    programs: ['node', 'nodejs', 'deno', 'bun', 'python', 'python2', 'python3', 'perl', 'ruby', 'php', 'lua', 'tclsh', 'Rscript', 'osascript'],
    runs: 'runs any program text: inline (-e, -c, -p, --eval, --require ...) or a script file',
    options: [{ short: ['e', 'E', 'c', 'p', 'r', 'M', 'm', 'I'], long: ['eval', 'print', 'require', 'import', 'loader', 'experimental-loader', 'experimental-policy', 'command', 'module', 'inspect', 'inspect-brk'], why: 'runs program text given inline, or loads extra code' }],
    optionsEndAtOperand: true,
    limits: 'a script in the work dir is a program: the allowlist cannot control what it does (the sandbox can).',
  },
  {
    programs: ['less', 'more', 'most', 'man', 'pg'],
    runs: 'pagers run commands from +cmd (e.g. +!cmd), LESSOPEN, -P pager / -H browser (man)',
    options: [{ short: ['P', 'H'], long: ['pager', 'html', 'browser', 'preprocessor'], why: 'names a program to run' }],
    operands: [{ pattern: '^\\+', why: 'an initial command (e.g. +!cmd) can run a shell command' }],
    env: { LESSOPEN: '', LESSCLOSE: '', MANPAGER: 'cat', PAGER: 'cat', LESSSECURE: '1' },
  },
  { programs: ['vi', 'vim', 'nvim', 'view', 'ex', 'ed', 'emacs', 'nano', 'pico', 'joe', 'mg'], runs: 'editors run shell commands from their command line (+cmd, -c, -S) and from their input (:!cmd)', refused: true },
  { programs: ['sort'], runs: '--compress-program names a program', options: [{ long: ['compress-program'], why: 'names a program to run' }] },
  { programs: ['split'], runs: `--filter ${SHELL_STRING}`, options: [{ long: ['filter'], why: 'runs a shell command' }] },
  { programs: ['zip'], runs: '-TT/--unzip-command names a program', options: [{ exact: ['-TT'], long: ['unzip-command'], why: 'runs a program to test the archive' }] },
  { programs: ['rg', 'ripgrep'], runs: '--pre names a preprocessor program', options: [{ long: ['pre', 'pre-glob', 'search-zip'], short: ['z'], why: 'runs a program on each file' }] },
  { programs: ['fd', 'fdfind'], runs: '-x/--exec and -X/--exec-batch run a command', options: [{ short: ['x', 'X'], long: ['exec', 'exec-batch'], why: 'runs a command per result' }] },
  { programs: ['wget'], runs: '--use-askpass names a program; -e/--execute runs wgetrc commands (which can name one)', options: [{ short: ['e'], long: ['use-askpass', 'execute', 'config'], why: 'runs a program or sets one in its configuration' }] },
  { programs: ['patch'], runs: 'ed-style diffs (-e/--ed) are applied by running ed, which runs commands', options: [{ short: ['e'], long: ['ed'], why: 'runs ed on the diff' }] },
];

function wrappers(rows: [programs: string[], valueOptions: string[], leading: number][]): ProgramPolicy[] {
  return rows.map(([programs, valueOptions, leading]) => ({
    programs,
    runs: 'runs the command in its arguments: that command must itself be allowed and passes the same checks',
    wrapper: { valueOptions, assignments: programs.includes('env'), leading },
    optionsEndAtOperand: true,
    options: [{ short: programs.includes('env') ? ['S'] : [], long: ['split-string', 'argv0', 'default-signal', 'ignore-signal', 'block-signal'], why: 'rewrites the command line or signals in ways the check cannot follow' }],
  }));
}

/** The row for a program, by the name it was asked for or the name of the binary behind it. */
export function policyFor(...names: string[]): ProgramPolicy | undefined {
  return LAUNCHER_POLICY.find((row) => names.some((name) => row.programs.includes(name)));
}
