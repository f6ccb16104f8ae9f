/**
 * Where JSON text first breaks the grammar (RFC 8259), and how. JSON.parse
 * says that it failed but, in Node 20, not always where; this reader walks
 * the text once to point at the offending character. It only locates
 * errors: values come from JSON.parse.
 */
export interface JsonSyntaxError {
  /** 0-based offset of the offending character (the text's length at its end). */
  offset: number;
  problem: string;
}

const MAX_DEPTH = 1000;

class Found extends Error {
  constructor(readonly at: JsonSyntaxError) {
    super(at.problem);
  }
}

export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  let i = 0;
  const fail = (problem: string, at = i): never => {
    throw new Found({ offset: at, problem });
  };
  const describe = () => (i >= text.length ? 'the text ends' : `unexpected ${JSON.stringify(text[i])}`);
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
    if (text.startsWith('//', i) || text.startsWith('/*', i)) fail('comments are not allowed in JSON');
  };
  const string = () => {
    i++; // the opening quote
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const ch = text[i];
      if (ch === '"') {
        i++;
        return;
      }
      if (ch < ' ') fail(ch === '\n' ? 'line break inside a string (write \\n)' : 'control character inside a string');
      if (ch === '\\') {
        const next = text[i + 1];
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('invalid \\u escape: four hex digits are needed');
          i += 6;
          continue;
        }
        if (next === undefined || !'"\\/bfnrt'.includes(next)) fail(`invalid escape sequence \\${next ?? ''}`);
        i += 2;
        continue;
      }
      i++;
    }
  };
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!match || match[0] === '-') fail('malformed number');
    i += match![0].length;
    if (i < text.length && /[0-9.eE]/.test(text[i])) fail('malformed number');
  };
  const value = (depth: number): void => {
    if (depth > MAX_DEPTH) fail('the value is nested too deeply');
    space();
    const ch = text[i];
    if (ch === '{') return object(depth);
    if (ch === '[') return array(depth);
    if (ch === '"') return string();
    if (ch === '-' || (ch >= '0' && ch <= '9')) return number();
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return;
      }
    }
    if (ch === "'") fail('strings need double quotes');
    fail(i >= text.length ? 'a value was expected, but the text ends' : `a value was expected, not ${describe().replace('unexpected ', '')}`);
  };
  const object = (depth: number) => {
    i++;
    space();
    if (text[i] === '}') {
      i++;
      return;
    }
    for (;;) {
      space();
      if (text[i] !== '"') fail(text[i] === '}' ? 'a property name was expected after the comma (trailing commas are not allowed)' : 'a property name in double quotes was expected');
      string();
      space();
      if (text[i] !== ':') fail(`a colon was expected after the property name (${describe()})`);
      i++;
      value(depth + 1);
      space();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '}') {
        i++;
        return;
      }
      fail(`a comma or a closing } was expected (${describe()})`);
    }
  };
  const array = (depth: number) => {
    i++;
    space();
    if (text[i] === ']') {
      i++;
      return;
    }
    for (;;) {
      space();
      if (text[i] === ']') fail('a value was expected after the comma (trailing commas are not allowed)');
      value(depth + 1);
      space();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === ']') {
        i++;
        return;
      }
      fail(`a comma or a closing ] was expected (${describe()})`);
    }
  };

  try {
    value(0);
    space();
    if (i < text.length) fail(`nothing may follow the value (${describe()})`);
    return undefined;
  } catch (err) {
    if (err instanceof Found) return err.at;
    throw err;
  }
}
