/**
 * Every `forge tool` subcommand that takes a tool name answers a name no tool
 * has with a hint, as `forge tool run` does: the name it likely meant, else
 * the tools there are. check, get and remove gave none when no name was close,
 * and describe pointed to another command instead.
 */
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, writeProject } from '../helpers/project.ts';

const project = () =>
  writeProject({
    'forge.yaml': minimalConfig('tool_dirs: [tools]\n'),
    'tools/greet.yaml': 'description: Greets.\ntags: [read]\nbash: echo hi\n',
    'tools/shout.yaml': 'description: Shouts.\ntags: [read]\nbash: echo HI\n',
    // A Python tool: get finds it, remove does not (it removes only the YAML tools Forge writes), so remove's hint leaves it out.
    'tools/count.py': '"""\nTool: count\nDescription: Counts characters.\nTags: read\n\nInput:\n  text (str): The text.\n\nOutput:\n  n (int): How many.\n"""\n\n\ndef execute(args):\n    return {"n": len(args["text"])}\n',
  });

describe('a tool name no tool has', () => {
  it('gets a hint from every subcommand: the tools there, or the one it likely meant', async () => {
    const dir = project();
    const home = { FORGE_HOME: writeProject({}), FORGE_GLOBAL_TOOLS: writeProject({}) };
    for (const [args, hint] of [
      [['tool', 'run', 'nope'], 'the tools you can call: count, greet, shout'],
      [['tool', 'describe', 'nope'], 'the tools you can call: count, greet, shout'],
      [['tool', 'check', 'nope'], 'the tools you can call: count, greet, shout'],
      [['tool', 'get', 'nope'], 'the tools there: count, greet, shout'],
      [['tool', 'remove', 'nope'], 'the YAML tools there: greet, shout'],
      [['tool', 'remove', 'nope', '--scope', 'user'], 'there are no YAML tools there'],
      [['tool', 'check', 'gret'], 'did you mean "greet"?'],
      [['tool', 'get', 'gret'], 'did you mean "greet"?'],
    ] as const) {
      const result = await forge([...args, '--json'], dir, home);
      expect({ args, code: result.code }).toEqual({ args, code: 1 });
      const failure = JSON.parse(result.stdout).error;
      expect({ args, code: failure.code, hint: failure.hint }).toEqual({ args, code: 'FORGE_TOOL_UNKNOWN', hint });
    }
    const text = await forge(['tool', 'check', 'nope'], dir, home);
    expect(text.stderr).toContain('✘ FORGE_TOOL_UNKNOWN no tool named "nope"\n  hint: the tools you can call: count, greet, shout\n');
  });
});
