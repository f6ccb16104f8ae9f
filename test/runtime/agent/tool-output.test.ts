/**
 * A tool result's text for the model (toolResultText) and the result read
 * back from it (parseToolResultText), as a reopened studio page shows a
 * stored conversation: the same value of the same JSON type, the same
 * error with its hint apart from its message.
 */
import { describe, expect, it } from 'vitest';
import { parseToolResultText, toolResultText } from '../../../runtime/agent/tool-output.ts';
import { LONE_SURROGATE } from '../../../runtime/lone-surrogate.ts';
import { fail, ok, type ToolResult } from '../../../runtime/tools/model.ts';

const roundTrip = (result: ToolResult, budget?: number) => parseToolResultText(toolResultText(result, budget));

describe('a tool result as text, and back', () => {
  it('an ok value of each JSON type comes back as it was, a string as a string', () => {
    const values: unknown[] = ['42', 42, '', 'null', null, 'true', true, false, 'false', -1.5, '{"a":1}', { a: 1, b: [null, 'x'] }, ['42', 42], [], {}, 'two\nlines\nHint: not a hint'];
    for (const value of values) expect(roundTrip(ok(value)), JSON.stringify(value)).toEqual({ ok: true, value });
  });

  it('the model sees a string as is and other values as JSON: "42" and 42 have one text, the form tells them apart', () => {
    expect(toolResultText(ok('42'))).toEqual({ text: '42', isError: false });
    expect(toolResultText(ok(42))).toEqual({ text: '42', isError: false, form: { json: true } });
    expect(toolResultText(ok({ a: 1 }))).toEqual({ text: '{"a":1}', isError: false, form: { json: true } });
  });

  it('an error comes back with its code and message, and its hint apart when it had one', () => {
    const withHint = fail('FORGE_TOOL_UNKNOWN', 'no tool named "nope"', 'the tools you can call: greet');
    expect(toolResultText(withHint)).toEqual({ text: 'Error FORGE_TOOL_UNKNOWN: no tool named "nope"\nHint: the tools you can call: greet', isError: true, form: { hintAt: 46 } });
    expect(roundTrip(withHint)).toEqual({ ok: false, error: { code: 'FORGE_TOOL_UNKNOWN', message: 'no tool named "nope"', hint: 'the tools you can call: greet' } });

    const noHint = fail('FORGE_TOOL_FAILED', 'it broke: badly');
    expect(toolResultText(noHint)).toEqual({ text: 'Error FORGE_TOOL_FAILED: it broke: badly', isError: true });
    expect(roundTrip(noHint)).toEqual({ ok: false, error: { code: 'FORGE_TOOL_FAILED', message: 'it broke: badly' } });

    // A message that holds the hint's words itself: they stay in the message, with or without a hint of its own.
    const quoting = 'stderr:\nHint: from the script';
    expect(roundTrip(fail('FORGE_TOOL_FAILED', quoting))).toEqual({ ok: false, error: { code: 'FORGE_TOOL_FAILED', message: quoting } });
    expect(roundTrip(fail('FORGE_TOOL_FAILED', quoting, 'fix it\nHint: really'))).toEqual({ ok: false, error: { code: 'FORGE_TOOL_FAILED', message: quoting, hint: 'fix it\nHint: really' } });
  });

  it('a text cut to the budget comes back as the text the model saw', () => {
    const cut = toolResultText(ok({ long: 'x'.repeat(50) }), 20);
    expect(cut.form).toBeUndefined();
    expect(parseToolResultText(cut)).toEqual({ ok: true, value: cut.text });
    const cutError = toolResultText(fail('FORGE_TOOL_FAILED', 'it broke', 'y'.repeat(50)), 40);
    expect(parseToolResultText(cutError)).toEqual({ ok: false, error: { code: 'FORGE_TOOL_FAILED', message: cutError.text.slice('Error FORGE_TOOL_FAILED: '.length) } });
  });
});

describe('a tool result past the budget', () => {
  it('is never cut between the halves of a surrogate pair: what the model is sent is well-formed text', () => {
    // Each budget falls at every offset within the pairs of a text of emoji.
    for (let budget = 10; budget < 14; budget++) {
      const { text } = toolResultText(ok('😀'.repeat(20)), budget);
      expect(LONE_SURROGATE.test(text), `budget ${budget}`).toBe(false);
      expect(text).toMatch(/\[output truncated: showing \d+ of 40 characters\]$/);
    }
  });
});
