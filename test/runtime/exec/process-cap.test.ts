import { describe, expect, it } from 'vitest';
import { ownProcessHardLimit, processCapProblem, type ProcessCapFacts } from '../../../runtime/exec/process-cap.ts';

const sandboxed = { isolation: 'bubblewrap' as const, bwrap: '/usr/bin/bwrap', prlimit: '/usr/bin/prlimit' };
const user: ProcessCapFacts = { uid: 1000, kernel: '6.1.0-18-amd64', setuidBwrap: false };

describe('processCapProblem', () => {
  it('caps a user agent\'s sandboxes on a kernel that counts per user namespace', () => {
    expect(processCapProblem(sandboxed, user)).toBeUndefined();
    expect(processCapProblem(sandboxed, { ...user, kernel: '5.14.0-362.el9.x86_64' })).toBeUndefined();
    expect(processCapProblem(sandboxed, { ...user, kernel: '10.0.1' })).toBeUndefined();
  });

  it('trusts what the probe saw over what bwrap\'s mode suggests', () => {
    expect(processCapProblem({ ...sandboxed, ownUserNamespace: true }, { ...user, setuidBwrap: true })).toBeUndefined();
    expect(processCapProblem({ ...sandboxed, ownUserNamespace: false }, user)).toMatch(/no user namespace of its own/);
  });

  it.each([
    ['root, whom the kernel exempts', { ...user, uid: 0 }, sandboxed, /runs as root/],
    ['a set-user-ID bwrap, which makes no user namespace', { ...user, setuidBwrap: true }, sandboxed, /set-user-ID/],
    ['a kernel that counts all of the user\'s processes', { ...user, kernel: '5.10.0-28-amd64' }, sandboxed, /Linux 5\.10\.0-28-amd64 counts/],
    ['an older major version', { ...user, kernel: '4.19.0' }, sandboxed, /Linux 4\.19\.0/],
    ['no sandbox', user, { ...sandboxed, isolation: 'none' as const }, /without a sandbox/],
    ['no prlimit', user, { ...sandboxed, prlimit: undefined }, /prlimit/],
  ])('sets no cap under %s, and says why', (_, facts, probe, why) => {
    expect(processCapProblem(probe, facts)).toMatch(why);
  });

  it('says why without parentheses of its own: forge doctor and the start line put it in theirs', () => {
    for (const facts of [{ ...user, uid: 0 }, { ...user, setuidBwrap: true }, { ...user, kernel: '5.10.0' }]) expect(processCapProblem(sandboxed, facts)).not.toMatch(/[()]/);
    for (const probe of [{ ...sandboxed, prlimit: undefined }, { ...sandboxed, ownUserNamespace: false }]) expect(processCapProblem(probe, user)).not.toMatch(/[()]/);
  });

  it('reads this host: as root (the suite and the CI run as root) there is no cap', () => {
    expect(process.getuid?.()).toBe(0);
    expect(processCapProblem(sandboxed)).toMatch(/runs as root/);
  });
});

describe('ownProcessHardLimit', () => {
  const limits = (soft: string, hard: string) => `Limit                     Soft Limit           Hard Limit           Units\nMax cpu time              unlimited            unlimited            seconds\nMax processes             ${soft.padEnd(20)} ${hard.padEnd(20)} processes\nMax open files            1024                 1048576              files\n`;

  it('reads the hard limit, not the soft one', () => {
    expect(ownProcessHardLimit(limits('100', '500'))).toBe(500);
    expect(ownProcessHardLimit(limits('100', 'unlimited'))).toBe(Infinity);
    expect(ownProcessHardLimit('')).toBe(Infinity);
  });
});
