/**
 * Is a declared Python dependency a PEP 508 requirement that pip reads as
 * written? Forge hands each one to pip, in a requirements file (the
 * project's venv, the bundle's python-requirements.txt) or as an argument
 * (forge package), so a string that is not one could be read as something
 * else: "--index-url=URL" or "-e git+URL" as a pip option, a line separator
 * pip splits on (it uses Python's splitlines: \x1c, \x85, U+2028 …) as a
 * second line, " -..." after a requirement as that line's options, "${VAR}"
 * as the user's environment (pip expands it in requirements files), " #" as
 * a comment, a trailing backslash as the next line joined on. A tool file
 * from someone else could then point pip at their index for every package.
 *
 * The grammar is PEP 508's (names, extras, version specifiers, a direct
 * `@ URL`, environment markers), checked without running Python.
 */

const NAME = /[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?/y;
const WS = /[ \t]*/y;
const VERSION_OP = /(?:===|==|!=|<=|>=|~=|<|>)/y;
const VERSION = /[A-Za-z0-9_.*+!-]+/y;
const URL = /[^\s]+/y;
const MARKER_VARS = new Set([
  'python_version', 'python_full_version', 'os_name', 'sys_platform', 'platform_release', 'platform_system',
  'platform_version', 'platform_machine', 'platform_python_implementation', 'implementation_name',
  'implementation_version', 'extra',
  // PEP 345 spellings PEP 508 still accepts.
  'os.name', 'sys.platform', 'platform.version', 'platform.machine', 'platform.python_implementation', 'python_implementation',
]);

/** Why `text` is not a requirement pip reads as written; undefined when it is one. */
export function requirementProblem(text: string): string | undefined {
  const hazard = requirementsFileHazard(text);
  if (hazard) return hazard;
  return new Pep508(text).problem();
}

/** What pip's requirements-file reader does to a line before PEP 508 sees it. */
function requirementsFileHazard(text: string): string | undefined {
  // Printable ASCII and tabs only: every PEP 508 token is ASCII, and pip splits lines on more than \n.
  const bad = /[^\x20-\x7e\t]/.exec(text);
  if (bad) return `it contains the character U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} (a line break or control character to pip)`;
  if (text.trimStart().startsWith('-')) return 'it starts with "-": pip would read it as an option, not a package';
  if (/\s-/.test(text)) return 'a word in it starts with "-": pip would read the rest of the line as options';
  if (/\$\{/.test(text)) return 'it contains "${": pip would put an environment variable\'s value there';
  if (/(^|\s)#/.test(text)) return 'it contains " #": pip would drop the rest as a comment';
  if (/\\\s*$/.test(text)) return 'it ends with a backslash: pip would join the next requirement to it';
  return undefined;
}

class Pep508 {
  private at = 0;
  constructor(private readonly text: string) {}

  problem(): string | undefined {
    this.skip();
    if (!this.match(NAME)) return 'it does not start with a package name';
    this.skip();
    if (this.eat('[')) {
      this.skip();
      if (!this.eat(']')) {
        do {
          this.skip();
          if (!this.match(NAME)) return 'an extra in [...] is not a name';
          this.skip();
        } while (this.eat(','));
        if (!this.eat(']')) return 'the extras are not closed with "]"';
      }
      this.skip();
    }
    if (this.eat('@')) {
      this.skip();
      if (!this.match(URL)) return 'no URL after "@"';
      // PEP 508: a marker after a URL is set apart by whitespace (";" may be part of a URL).
      if (this.at < this.text.length && !/\s/.test(this.text[this.at])) return 'the URL is not followed by whitespace';
      this.skip();
    } else {
      const versions = this.versionSpec();
      if (versions) return versions;
      this.skip();
    }
    if (this.eat(';')) {
      const marker = this.markerOr();
      if (marker) return marker;
      this.skip();
    }
    if (this.at < this.text.length) return `unexpected "${this.text.slice(this.at)}"`;
    return undefined;
  }

  private versionSpec(): string | undefined {
    const parenthesised = this.eat('(');
    this.skip();
    if (this.peek(VERSION_OP)) {
      do {
        this.skip();
        if (!this.match(VERSION_OP)) return 'a version specifier has no comparison (==, >=, ~= …)';
        this.skip();
        if (!this.match(VERSION)) return 'a version specifier has no version';
        this.skip();
      } while (this.eat(','));
    }
    if (parenthesised && !this.eat(')')) return 'the version specifiers are not closed with ")"';
    return undefined;
  }

  private markerOr(): string | undefined {
    let problem = this.markerAnd();
    while (!problem && this.keyword('or')) problem = this.markerAnd();
    return problem;
  }

  private markerAnd(): string | undefined {
    let problem = this.markerExpr();
    while (!problem && this.keyword('and')) problem = this.markerExpr();
    return problem;
  }

  private markerExpr(): string | undefined {
    this.skip();
    if (this.eat('(')) {
      const problem = this.markerOr();
      if (problem) return problem;
      this.skip();
      return this.eat(')') ? undefined : 'a marker\'s "(" is not closed';
    }
    if (!this.markerVar()) return 'the marker after ";" is not an environment marker';
    this.skip();
    if (!this.match(VERSION_OP) && !this.keyword('in') && !(this.keyword('not') && this.keyword('in'))) return 'a marker has no comparison';
    this.skip();
    return this.markerVar() ? undefined : 'a marker compares with nothing';
  }

  private markerVar(): boolean {
    this.skip();
    const quote = this.text[this.at];
    if (quote === '"' || quote === "'") {
      const end = this.text.indexOf(quote, this.at + 1);
      if (end < 0) return false;
      this.at = end + 1;
      return true;
    }
    const word = /[A-Za-z_.]+/y;
    word.lastIndex = this.at;
    const m = word.exec(this.text);
    if (!m || !MARKER_VARS.has(m[0])) return false;
    this.at += m[0].length;
    return true;
  }

  private keyword(word: string): boolean {
    this.skip();
    if (!this.text.startsWith(word, this.at) || /[A-Za-z0-9_]/.test(this.text[this.at + word.length] ?? '')) return false;
    this.at += word.length;
    return true;
  }

  private skip(): void {
    this.match(WS);
  }

  private eat(char: string): boolean {
    if (this.text[this.at] !== char) return false;
    this.at++;
    return true;
  }

  private peek(pattern: RegExp): boolean {
    pattern.lastIndex = this.at;
    return pattern.test(this.text);
  }

  private match(pattern: RegExp): boolean {
    pattern.lastIndex = this.at;
    const m = pattern.exec(this.text);
    if (!m) return false;
    this.at += m[0].length;
    return true;
  }
}
