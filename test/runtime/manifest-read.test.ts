/**
 * agent.json as every bundle command reads it (runtime/manifest-read.ts): a text that is not JSON,
 * or not a manifest any command can read, is FORGE_AGENT_JSON at its place, never a value passed on.
 */
import { describe, expect, it } from 'vitest';
import { readManifest } from '../../runtime/manifest-read.ts';

const problemOf = (text: string) => {
  const read = readManifest(text, 'out/agent.json');
  if (!('problem' in read)) throw new Error(`read as a manifest: ${text}`);
  return read.problem;
};

describe('readManifest', () => {
  it('takes a manifest whose tools are a list of named tools', () => {
    const read = readManifest('{"agent_id":"a","tools":[{"name":"x"}]}', 'agent.json');
    expect('manifest' in read && read.manifest.tools[0].name).toBe('x');
  });

  it('places a syntax error where V8 found it, without the position text', () => {
    const problem = problemOf('{\n  "agent_id": "a",\n  bad\n}');
    expect(problem).toMatchObject({ code: 'FORGE_AGENT_JSON', severity: 'error', file: 'out/agent.json', line: 3, column: 3, lineText: '  bad' });
    expect(problem.message).toMatch(/^agent\.json is not JSON: \S/);
    expect(problem.message).not.toContain('position');
    expect(problem.hint).toContain('forge build');
  });

  it('places a file cut short at its end', () => {
    const problem = problemOf('{\n  "agent_id": "a",\n  "tools": [');
    expect(problem).toMatchObject({ code: 'FORGE_AGENT_JSON', line: 3, column: 13 });
  });

  it('places what V8 only quotes ("Unexpected token \'t\', …" with no position), without the quote', () => {
    const text = `{"agent_id": tru, "secret_looking": "${'x'.repeat(50)}"}`;
    const problem = problemOf(text);
    expect(problem).toMatchObject({ code: 'FORGE_AGENT_JSON', file: 'out/agent.json', line: 1, column: text.indexOf('tru') + 1 });
    expect(problem.message).not.toContain('xxxxx');
    expect(problem.message).not.toContain('is not valid JSON');
  });

  it.each([
    ['a list', '[1]', 'agent.json is not an object', 1],
    ['no tools', '{"agent_id":"a"}', 'agent.json has no "tools" list', 1],
    ['tools that are not a list', '{"agent_id":"a",\n"tools":{"x":1}}', 'agent.json has "tools" that is not a list of tools', 2],
    ['a tool that is not an object', '{"agent_id":"a",\n"tools":[{"name":"x"},"y"]}', 'agent.json tools[1] is not a tool (an object with a name)', 2],
    ['a tool without a name', '{"agent_id":"a",\n"tools":[{"name":"x"},{"description":"y"}]}', 'agent.json tools[1] has no name', 2],
  ])('refuses %s, at the key that leads to it', (_, text, message, line) => {
    expect(problemOf(text)).toMatchObject({ code: 'FORGE_AGENT_JSON', message, line });
  });
});
