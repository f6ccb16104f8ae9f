import { describe, expect, it } from 'vitest';
import { codeCacheVariant, commandName } from '../../cli/command-names.ts';

describe('codeCacheVariant', () => {
  it.each([
    [[], 'help'],
    [['help'], 'help'],
    [['help', 'build'], 'help'],
    [['--help'], 'help'],
    [['-h'], 'help'],
    [['build', '--prod'], 'build'],
    [['run', '--dev'], 'run'],
    [['tool', 'run', 'greet', '--param', 'name=x'], 'tool-run'],
    [['tool', 'run', '--help'], 'help'],
    [['build', '-h'], 'help'],
    [['--version'], 'version'],
    [['tool', 'forged', 'show', 'x'], 'tool-forged'],
    [['mcp', 'test', 'fs'], 'mcp-test'],
    [['tool'], 'tool'],
    [['tool', '--json'], 'tool'],
    [['tool', 'lst'], 'tool'],
    [['tool', 'constructor'], 'tool'],
    [['build', 'run'], 'build'],
    [['biuld'], 'other'],
    [['toString'], 'other'],
    [['--json', 'build'], 'other'],
  ])('files %j under %s', (argv, variant) => {
    expect(codeCacheVariant(argv)).toBe(variant);
  });
});

describe('commandName', () => {
  it('names only forge\'s commands, not the properties every object has', () => {
    expect(commandName('validate')).toBe('validate');
    for (const word of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'Build', '']) expect(commandName(word)).toBeUndefined();
  });
});
