/**
 * The awk and sed scanners and the reading of their arguments, as an
 * attacker would try them: gawk-only ways to reach a command (indirect calls,
 * spelled-out directives, /inet), and arguments that make the check scan one
 * argument while the program runs another. The real programs are run by the
 * launcher corpus (launcher-corpus.test.ts); these need no gawk installed.
 */
import { describe, expect, it } from 'vitest';
import { resolveAllowlist, type ResolvedBinary } from '../../../runtime/guard/command-guard.ts';
import { checkLaunch, type LaunchPlan } from '../../../runtime/guard/launcher-check.ts';
import { awkProblem } from '../../../runtime/guard/script-scan.ts';

describe('awkProblem, gawk-only ways to run a command', () => {
  it.each([
    ['an indirect call', 'BEGIN { f = "sys" "tem"; @f("id") }'],
    ['a blank after @', 'BEGIN { f = "system"; @ f("id") }'],
    ['a line continuation after @', 'BEGIN { f = "system"; @\\\nf("id") }'],
    ['a comment after @', 'BEGIN { f = "system"; @ # c\nf("id") }'],
    ['a blank before the parenthesis', 'BEGIN { f = "system"; @f ("id") }'],
    ['a namespace-qualified name', 'BEGIN { awk::f = "system"; @awk::f("id") }'],
    ['a spaced namespace', 'BEGIN { @awk :: f("id") }'],
  ])('refuses %s', (_what, program) => {
    expect(awkProblem(program)).toMatch(/calls a function through a variable/);
  });

  it.each([
    ['@ load "filefuncs"; BEGIN { }'],
    ['@\\\nload "filefuncs"; BEGIN { }'],
    ['@ # c\ninclude "x.awk"'],
    ['@namespace "x"; BEGIN { }'],
  ])('refuses the directive in %j', (program) => {
    expect(awkProblem(program)).toMatch(/loads code/);
  });

  it.each([
    ['BEGIN { while ((getline line < "/inet/tcp/0/example.com/80") > 0) print line }', /network connection/],
    ['BEGIN { print "x" |& "sh" }', /coprocess/],
    ['BEGIN { print "x" | & "sh" }', /coprocess/],
  ])('refuses %j', (program, why) => {
    expect(awkProblem(program)).toMatch(why);
  });

  it.each([
    ['{ print $1 "@example.com" }'],
    ['/@/ { n++ } END { print n }'],
    ['$0 ~ @/^a/ { print }'],
    ['{ print ($1 > "b") }'],
  ])('lets %j through', (program) => {
    expect(awkProblem(program)).toBeUndefined();
  });
});

describe('the arguments of awk and sed, read as getopt reads them', () => {
  const allowlist = resolveAllowlist([], '/usr/bin:/bin');
  const context = { allowlist, workDir: '/tmp', home: '/tmp', env: {} };
  const fake = (name: string, real = name): ResolvedBinary => ({ name, path: `/usr/bin/${name}`, real: `/usr/bin/${real}` });
  const verdict = (name: string, args: string[], real?: string) => checkLaunch(fake(name, real), args, context);

  it.each([
    ['the program looks like an assignment', 'awk', ['x=1\nBEGIN { system("id") }', 'file.txt']],
    ['-F is clustered and takes the next argument', 'gawk', ['-bF', ':', 'BEGIN { system("id") }']],
    ['-v is clustered and takes the next argument', 'gawk', ['-bv', 'x=1', 'BEGIN { system("id") }']],
    ['the -e program is attached', 'gawk', ['-e{ system("id") }']],
    ['the -e program is the last of a cluster', 'gawk', ['-be', 'BEGIN { system("id") }']],
    ['a second -e program', 'gawk', ['-e', 'BEGIN { }', '-e', 'BEGIN { system("id") }']],
    ['an abbreviated --source', 'gawk', ['--sou', 'BEGIN { system("id") }']],
    ['an /inet operand', 'gawk', ['{ print }', '/inet/tcp/0/example.com/80']],
    ['sed: s with "=" as its delimiter looks like an assignment', 'sed', ['s=x=id=e', 'p']],
    ['sed: -e after an operand (GNU sed permutes)', 'sed', ['p', '-e', '1e id', 'file.txt']],
    ['sed: the -e script is attached to a cluster', 'sed', ['-ne1e id', 'file.txt']],
    ['sed: --expr after an operand', 'sed', ['file.txt', '--expr=1e id']],
  ])('refuses when %s', async (_what, name, args) => {
    const result = await verdict(name, args);
    expect(result, JSON.stringify(result)).toMatchObject({ code: 'FORGE_CLI_LAUNCHER' });
  });

  it.each([
    ['awk', ['-F|', '{ print $1 }', 'file.txt']],
    ['awk', ['-F', '|', '{ print $1 }', 'file.txt']],
    ['awk', ['-v', 'sep=|', '{ print $1 sep }', 'file.txt']],
    ['awk', ['{ print $1 }', 'x=1', 'file.txt']],
    ['gawk', ['-e', '{ print $1 }', 'file.txt']],
    ['sed', ['-n', '-e', 's/a/b/p', '-e', '1d', 'notes.txt']],
    ['sed', ['-i.bak', 's/a/b/', 'file.txt']],
    ['sed', ['-E', 's/(a)|(b)/x/', 'file.txt']],
  ])('%s %j passes', async (name, args) => {
    const result = await verdict(name, args);
    expect('code' in result, JSON.stringify(result)).toBe(false);
  });

  it('runs gawk, also when awk is gawk, with --sandbox', async () => {
    for (const [name, real] of [['gawk', 'gawk'], ['awk', 'gawk']]) {
      const plan = (await verdict(name, ['{ print }', 'file.txt'], real)) as LaunchPlan;
      expect(plan.args).toEqual(['--sandbox', '{ print }', 'file.txt']);
    }
    const mawk = (await verdict('awk', ['{ print }'], 'mawk')) as LaunchPlan;
    expect(mawk.args).toEqual(['{ print }']);
  });
});
