/**
 * The custom tool docstring grammar (DESIGN.md §5):
 *
 *   Tool: weather_lookup
 *   Description: Current weather for a city.
 *     Continues on indented lines.
 *   Category: custom | dev
 *   Tags: read, network
 *   Timeout: 10s
 *   Composed Of: file_read, file_write     (TS/JS tools: what ctx.registry may call)
 *   Single Confirmation: yes               (or Atomic: yes — confirmed once for the whole call)
 *
 *   Input:
 *     city (str): City name.
 *     units (str, optional): "metric" or "imperial". Default: metric.
 *     days (int, default=1): Forecast days.
 *
 *   Output:
 *     summary (str): One-line summary.
 *
 * Parsing never throws: every problem is a diagnostic at file:line:column.
 */
import type { DiagnosticCode } from '../../diagnostic-codes.ts';
import { parseDuration } from '../../duration.ts';
import { error, warning, type Diagnostic } from '../../diagnostics.ts';
import { closestMatch, didYouMean, likelyTypo } from '../../suggest.ts';
import { misspeltSecurityTag, misspeltSecurityTagText } from '../../guard/security-tags.ts';
import type { JSONSchema } from '../model.ts';
import { checkToolName } from '../names.ts';
import type { DocLine, ExtractedDocstring } from './docstring-source.ts';
import { coerceDefault, isTypeProblem, parseType, TYPE_NAMES } from './param-types.ts';
import { ownValue } from '../../own-value.ts';

export interface ParsedDocstring {
  name: string;
  description: string;
  category: 'custom' | 'dev';
  tags: string[];
  timeoutMs?: number;
  inputSchema: JSONSchema;
  outputSchema?: JSONSchema;
  composedOf?: string[];
  singleConfirmation?: boolean;
  /** Where each name of `Composed Of:` is written (for diagnostics about that name). */
  composedOfAt?: Record<string, { line: number; column: number; lineText: string }>;
  /** Where `Composed Of:` (or the confirmation field) is, for diagnostics about it. */
  compositionAt?: { line: number; column: number; lineText: string };
  /** Where the tool's name is, in its `Tool:` field (for diagnostics about the tool as a whole). */
  nameAt: { line: number; column: number; lineText: string };
}

export interface DocstringParse {
  tool?: ParsedDocstring;
  diagnostics: Diagnostic[];
}

/**
 * A field whose value is a name, a list of names, a duration or yes/no may
 * end with a comment (`Tags: read, network   # drives approval`), as YAML
 * lines may: people annotate the fields they copy. A description is prose,
 * where "#" is text ("closes issue #12"), so it keeps every character.
 */
function withoutComment(field: string, value: string): string {
  return field === 'Description' ? value : value.replace(/(^|\s)#.*$/, '');
}

const FIELDS = ['Tool', 'Description', 'Category', 'Tags', 'Timeout', 'Composed Of', 'Single Confirmation', 'Atomic'] as const;
const SECTIONS = ['Input', 'Output'] as const;
/** Other docstring styles' names (Google's Args:, numpydoc's Parameters:, Returns:) for Forge's sections. */
const SECTION_ALIASES: Record<string, (typeof SECTIONS)[number]> = { args: 'Input', arguments: 'Input', parameters: 'Input', params: 'Input', returns: 'Output', return: 'Output', yields: 'Output' };
type Field = (typeof FIELDS)[number];
type Section = (typeof SECTIONS)[number];

const KEY_LINE = /^([A-Za-z][A-Za-z0-9_ -]*?)\s*:(.*)$/;

interface Param {
  name: string;
  schema: JSONSchema;
  required: boolean;
  description: string;
  defaultText?: { raw: string; at: DocLine; offset: number };
  /** Where each line of the description starts in `description`, and in its line (for a caret inside it). */
  descriptionAt: { start: number; line: DocLine; offset: number }[];
  at: DocLine;
  typeOffset: number;
  /** The type as written ("int", "enum(a|b)"), for hints. */
  typeText: string;
}

export function parseDocstring(doc: ExtractedDocstring, file: string): DocstringParse {
  return new DocstringParser(doc, file).parse();
}

class DocstringParser {
  private readonly diagnostics: Diagnostic[] = [];
  /** Each field's value, where it starts, and the indented lines that continue it. */
  private readonly fields = new Map<Field, { value: string; at: DocLine; more?: DocLine[] }>();
  private readonly params: Record<Section, Param[]> = { Input: [], Output: [] };
  private readonly seenSections = new Set<Section>();

  constructor(
    private readonly doc: ExtractedDocstring,
    private readonly file: string,
  ) {}

  private at(line: DocLine, offset = 0) {
    return { file: this.file, line: line.line, column: line.column + offset, lineText: line.source ?? line.text };
  }

  private error(code: DiagnosticCode, message: string, line: DocLine, offset = 0, hint?: string) {
    this.diagnostics.push(error(code, message, this.at(line, offset), hint));
  }

  parse(): DocstringParse {
    let field: Field | undefined; // field being continued
    let section: Section | undefined;
    let paramIndent = -1;
    let blankSince = false;

    for (const line of this.doc.lines) {
      const text = line.text;
      if (text.trim() === '') {
        blankSince = true;
        continue;
      }
      const indent = text.length - text.trimStart().length;

      if (indent === 0) {
        const key = KEY_LINE.exec(text);
        const known = key ? this.classifyKey(key[1]) : undefined;
        if (key && known) {
          blankSince = false;
          const value = known.kind === 'field' ? withoutComment(known.name, key[2]).trim() : key[2].trim();
          if (known.kind === 'section') {
            section = known.name;
            field = undefined;
            paramIndent = -1;
            if (this.seenSections.has(section)) this.error('FORGE_DOCSTRING_DUPLICATE', `section "${section}" appears twice`, line, 0, `list every ${section.toLowerCase()} parameter under one ${section}:`);
            this.seenSections.add(section);
            if (value && !/^(none|-)$/i.test(value)) {
              this.error('FORGE_DOCSTRING_SYNTAX', `"${section}:" takes its parameters on the following indented lines`, line, key[0].indexOf(':') + 1, `write one "name (type): description" per line under ${section}:`);
            }
          } else {
            section = undefined;
            field = known.name;
            if (this.fields.has(field)) this.error('FORGE_DOCSTRING_DUPLICATE', `field "${field}" appears twice`, line, 0, `keep one ${field}: line; indent lines that continue it`);
            else this.fields.set(field, { value, at: line });
          }
          continue;
        }
        // A line shaped as a field ("Tgas: read", "Parameters:", "Owner: alice") is a field even
        // right under another: taken as prose, it would vanish into that field (its inputs lost, or
        // "owner:" a tag). Other prose directly under a field continues it.
        const continuing = field !== undefined && !blankSince;
        const fieldShaped = key !== null && !key[1].includes(' ') && !key[2].startsWith('//'); // a URL is prose
        if (continuing && !fieldShaped) {
          this.continueField(field!, line, false);
          continue;
        }
        if (fieldShaped) {
          const typo = likelyTypo(key[1], [...FIELDS, ...SECTIONS]);
          const alias = ownValue(SECTION_ALIASES, key[1].toLowerCase());
          const hint =
            (alias ? `did you mean "${alias}"? Forge's docstrings list ${alias === 'Input' ? "a tool's parameters under Input:" : 'what it returns under Output:'}` : undefined) ??
            (typo ? `did you mean "${typo}"?` : didYouMean(key[1], [...FIELDS, ...SECTIONS])) ??
            `known fields: ${[...FIELDS, ...SECTIONS].join(', ')}${continuing ? `; indent the line if it continues ${field}:` : ''}`;
          this.error('FORGE_DOCSTRING_FIELD', `unknown field or section "${key[1]}"`, line, 0, hint);
          field = undefined;
          section = undefined;
        } else {
          this.error('FORGE_DOCSTRING_SYNTAX', `unexpected text "${truncate(text)}"`, line, 0, 'fields are written "Name: value"; indent lines that continue the previous field');
        }
        continue;
      }

      // Indented line.
      if (section) {
        if (paramIndent < 0 || indent <= paramIndent) {
          paramIndent = paramIndent < 0 ? indent : paramIndent;
          this.parseParam(section, line, indent);
        } else {
          const last = this.params[section].at(-1);
          if (last) {
            last.descriptionAt.push({ start: last.description ? last.description.length + 1 : 0, line, offset: indent });
            last.description = joinText(last.description, text.trim(), false);
          }
        }
        blankSince = false;
        continue;
      }
      if (field) {
        this.continueField(field, line, blankSince);
        blankSince = false;
        continue;
      }
      this.error('FORGE_DOCSTRING_SYNTAX', `unexpected indented text "${truncate(text.trim())}"`, line, indent, 'indented lines continue a field or list the parameters of Input:/Output:');
    }
    return this.finish();
  }

  private classifyKey(raw: string): { kind: 'field'; name: Field } | { kind: 'section'; name: Section } | undefined {
    // "Composed Of", "ComposedOf" and "composed-of" are one field.
    const squash = (text: string) => text.toLowerCase().replace(/[\s_-]+/g, '');
    const key = squash(raw.trim());
    const field = FIELDS.find((f) => squash(f) === key);
    if (field) return { kind: 'field', name: field };
    const section = SECTIONS.find((s) => s.toLowerCase() === key);
    if (section) return { kind: 'section', name: section };
    return undefined;
  }

  private continueField(field: Field, line: DocLine, paragraph: boolean) {
    const entry = this.fields.get(field);
    if (!entry) return;
    (entry.more ??= []).push(line);
    const text = withoutComment(field, line.text.trim()).trim();
    if (!text) return;
    if (field === 'Tags' || field === 'Composed Of') entry.value = entry.value ? `${entry.value}, ${text}` : text;
    else entry.value = joinText(entry.value, text, paragraph && field === 'Description');
  }

  private parseParam(section: Section, line: DocLine, indent: number) {
    const text = line.text.slice(indent);
    const nameMatch = /^([A-Za-z_][A-Za-z0-9_-]*)\s*/.exec(text);
    if (!nameMatch) {
      this.error('FORGE_DOCSTRING_SYNTAX', `expected a parameter, found "${truncate(text)}"`, line, indent, 'write parameters as "name (type): description"');
      return;
    }
    const name = nameMatch[1];
    if (name === '__proto__') {
      // JSON Schema validators (ajv) skip a property of that name: it could be neither checked nor passed.
      this.error('FORGE_DOCSTRING_SYNTAX', 'a parameter cannot be named "__proto__"', line, indent, 'choose another name, e.g. proto');
      return;
    }
    let pos = nameMatch[0].length;
    if (text[pos] !== '(') {
      this.error(
        'FORGE_DOCSTRING_SYNTAX',
        `parameter "${name}" has no type`,
        line,
        indent + pos,
        `write it as "${name} (str): ..." — types: str, int, float, bool, list[str], dict, enum(a|b), any`,
      );
      return;
    }
    // Find the matching ")" — types such as enum(a|b) nest parentheses.
    let depth = 0;
    let close = -1;
    for (let i = pos; i < text.length; i++) {
      if (text[i] === '(' || text[i] === '[') depth++;
      else if (text[i] === ')' || text[i] === ']') {
        depth--;
        if (depth === 0 && text[i] === ')') {
          close = i;
          break;
        }
      }
    }
    if (close < 0) {
      this.error('FORGE_DOCSTRING_SYNTAX', `parameter "${name}": missing ")" after its type`, line, indent + pos);
      return;
    }
    const inside = text.slice(pos + 1, close);
    const insideOffset = indent + pos + 1;
    pos = close + 1;
    const restLead = /^\s*:?\s*/.exec(text.slice(pos))![0].length;
    const rest = text.slice(pos + restLead);
    const restOffset = indent + pos + restLead;

    const parts = splitTopLevel(inside);
    const typePart = parts[0];
    const typeOffset = insideOffset + (typePart.offset + (typePart.text.length - typePart.text.trimStart().length));
    const typed = parseType(typePart.text.trim());
    if (isTypeProblem(typed)) {
      const hint = typed.word ? didYouMean(typed.word, TYPE_NAMES) : undefined;
      this.error('FORGE_DOCSTRING_TYPE', `${typed.message}`, line, typeOffset + typed.offset, hint ?? typed.hint ?? 'types: str, int, float, bool, list, list[str], dict, enum(a|b), any');
      return;
    }

    const param: Param = { name, schema: typed.schema, required: !typed.optional, description: rest, descriptionAt: [{ start: 0, line, offset: restOffset }], at: line, typeOffset, typeText: typePart.text.trim() };
    for (const part of parts.slice(1)) {
      const modifier = part.text.trim();
      const offset = insideOffset + part.offset + (part.text.length - part.text.trimStart().length);
      const dflt = /^default\s*[=:]\s*(.*)$/i.exec(modifier);
      if (/^optional$/i.test(modifier)) param.required = false;
      else if (/^required$/i.test(modifier)) param.required = true;
      else if (dflt) {
        param.defaultText = { raw: dflt[1], at: line, offset };
        param.required = false;
      } else {
        // A misspelt option ("optinal", "defualt=1") is said as one, written as it likely was meant.
        const [, word, value] = /^([^=:]*)(.*)$/s.exec(modifier)!;
        const meant = closestMatch(word.trim(), ['optional', 'required', 'default']);
        const written = meant === 'default' ? `default${/^[=:]/.test(value.trim()) ? value.trim() : '=VALUE'}` : meant;
        const hint = written ? `did you mean "${written}"? ` : '';
        this.error('FORGE_DOCSTRING_SYNTAX', `unknown parameter option "${modifier}"`, line, offset, `${hint}options are: optional, required, default=VALUE`);
      }
    }
    if (this.params[section].some((p) => p.name === name)) {
      this.error('FORGE_DOCSTRING_DUPLICATE', `parameter "${name}" is declared twice in ${section}`, line, indent, 'remove one of the two lines, or rename one parameter');
      return;
    }
    this.params[section].push(param);
  }

  private buildSchema(section: Section): JSONSchema {
    const properties: Record<string, JSONSchema> = {};
    const required: string[] = [];
    for (const p of this.params[section]) {
      const schema: JSONSchema = { ...p.schema };
      const description = p.description.trim();
      if (description) schema.description = description;
      // "Default: metric." in the description is a default too, unless one was given explicitly —
      // when the rest of its sentence is one value. "Default: the account's currency." is prose:
      // no default (a default the tool works out itself), but the parameter may be left out.
      const fromDescription = !p.defaultText ? descriptionDefault(p.description) : undefined;
      if (fromDescription?.prose && section === 'Input') p.required = false;
      const defaultText = p.defaultText?.raw ?? fromDescription?.value;
      if (defaultText !== undefined) {
        const coerced = coerceDefault(defaultText, p.schema);
        if (coerced.error && p.defaultText) {
          this.error('FORGE_DOCSTRING_DEFAULT', `parameter "${p.name}": ${coerced.error}`, p.at, p.defaultText.offset, `a default is a value of the parameter's type, ${p.typeText}; or leave it out and make the parameter optional`);
        } else if (coerced.error) {
          const where = locateIn(p.descriptionAt, fromDescription!.index);
          this.error(
            'FORGE_DOCSTRING_DEFAULT',
            `parameter "${p.name}": "Default: ${defaultText}" in its description is taken as its default, and ${coerced.error.replace(/^default (?:"(?:[^"\\]|\\.)*"|\S+) is /, 'it is ')}`,
            where.line,
            where.offset,
            `to give it a default, write it in the type's parentheses: ${p.name} (${p.typeText}, default=VALUE); if the words after "Default:" describe it, use more than one word ("Default: all rows.")`,
          );
        } else if (coerced.value !== undefined) {
          schema.default = coerced.value;
          if (section === 'Input') p.required = false;
        } else if (section === 'Input') {
          p.required = false;
        }
      }
      properties[p.name] = schema;
      if (p.required) required.push(p.name);
    }
    const schema: JSONSchema = { type: 'object', properties };
    if (required.length) schema.required = required;
    if (section === 'Input') schema.additionalProperties = false;
    return schema;
  }

  private finish(): DocstringParse {
    const tool = this.fields.get('Tool');
    if (!tool) {
      // Without a Tool: line this is an ordinary module docstring (a helper
      // module): its prose is nobody's business — unless it looks like a tool.
      this.diagnostics.length = 0;
      if (this.fields.size || this.seenSections.size) {
        const first = this.doc.lines[0];
        this.diagnostics.push(
          warning('FORGE_DOCSTRING_NO_TOOL', 'docstring looks like a tool declaration but has no "Tool:" line; the file is not registered as a tool', this.at(first), 'add "Tool: <name>" as the first line'),
        );
      }
      return { diagnostics: this.diagnostics };
    }
    const name = tool.value.trim();
    const category = this.readCategory();
    const nameProblem = checkToolName(name, 'custom');
    if (nameProblem) this.error('FORGE_TOOL_NAME', nameProblem, tool.at, tool.value ? tool.at.text.indexOf(tool.value.trim()) : 0, 'tool names use ASCII letters, digits, _ and - (at most 64), as the model APIs require');

    const description = this.fields.get('Description');
    if (!description || !description.value.trim()) {
      this.error('FORGE_DOCSTRING_MISSING', `tool "${name}" has no Description`, description?.at ?? tool.at, 0, 'models choose tools by their description; add "Description: what it does"');
    }
    const inputSchema = this.buildSchema('Input');
    const outputSchema = this.params.Output.length ? this.buildSchema('Output') : undefined;
    const parsed: ParsedDocstring = {
      name,
      description: description?.value.trim() ?? '',
      category,
      tags: this.readTags(),
      inputSchema,
      nameAt: this.at(tool.at, tool.value ? Math.max(0, tool.at.text.indexOf(tool.value.trim())) : 0),
    };
    if (outputSchema) parsed.outputSchema = outputSchema;
    const timeoutMs = this.readTimeout();
    if (timeoutMs !== undefined) parsed.timeoutMs = timeoutMs;
    this.readComposition(parsed);
    return { tool: parsed, diagnostics: this.diagnostics };
  }

  private readComposition(parsed: ParsedDocstring) {
    const composed = this.fields.get('Composed Of');
    if (composed) {
      const names: string[] = [];
      const at: Record<string, { line: number; column: number; lineText: string }> = {};
      // Where each name is written: on the field's line after its colon, or on a line continuing it.
      const lines = [{ line: composed.at, from: composed.at.text.indexOf(':') + 1 }, ...(composed.more ?? []).map((line) => ({ line, from: 0 }))];
      const locate = (name: string) => {
        for (const { line, from } of lines) {
          const found = new RegExp(`(?<![\\w.-])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w.-])`).exec(line.text.slice(from));
          if (found) return { line, offset: from + found.index };
        }
        return { line: composed.at, offset: 0 };
      };
      for (const name of composed.value.split(/[,\s]+/).filter(Boolean)) {
        const where = locate(name);
        const problem = checkToolName(name, 'adapter');
        if (problem) this.error('FORGE_DOCSTRING_COMPOSED', problem, where.line, where.offset);
        else if (!names.includes(name)) {
          names.push(name);
          at[name] = this.at(where.line, where.offset);
        }
      }
      if (names.length) {
        parsed.composedOf = names;
        parsed.composedOfAt = at;
      }
      parsed.compositionAt = this.at(composed.at);
    }
    for (const field of ['Single Confirmation', 'Atomic'] as const) {
      const entry = this.fields.get(field);
      if (!entry) continue;
      const value = entry.value.trim().toLowerCase();
      if (/^(yes|true|on)$/.test(value)) parsed.singleConfirmation = true;
      else if (!/^(no|false|off)$/.test(value)) {
        this.error('FORGE_DOCSTRING_FIELD', `"${field}:" takes yes or no, not "${entry.value.trim()}"`, entry.at, Math.max(0, entry.at.text.indexOf(entry.value.trim())));
      }
      parsed.compositionAt ??= this.at(entry.at);
    }
  }

  private readCategory(): 'custom' | 'dev' {
    const field = this.fields.get('Category');
    if (!field) return 'custom';
    const value = field.value.trim().toLowerCase();
    if (value === 'custom' || value === 'dev') return value;
    const offset = field.at.text.indexOf(field.value.trim());
    if (value === 'builtin' || value === 'adapter') {
      this.error('FORGE_DOCSTRING_CATEGORY', `a tool in tool_dirs cannot declare category "${value}"`, field.at, offset, 'use "custom" (the default) or "dev" for a development-only tool');
    } else {
      const hint = didYouMean(value, ['custom', 'dev']);
      this.error('FORGE_DOCSTRING_CATEGORY', `unknown category "${field.value.trim()}"`, field.at, offset, hint ?? 'use "custom" (the default) or "dev"');
    }
    return 'custom';
  }

  private readTags(): string[] {
    const field = this.fields.get('Tags');
    if (!field) return [];
    const tags: string[] = [];
    for (const raw of field.value.split(/[,\s]+/)) {
      const tag = raw.trim().toLowerCase();
      if (!tag) continue;
      if (!/^[a-z0-9][a-z0-9_.:-]*$/.test(tag)) {
        this.error('FORGE_DOCSTRING_TAG', `tag "${raw}" may only contain letters, digits, "_", "-", "." and ":"`, field.at, Math.max(0, field.at.text.indexOf(raw)));
        continue;
      }
      if (!tags.includes(tag)) tags.push(tag);
    }
    const misspelt = misspeltSecurityTag(tags);
    if (misspelt) {
      const { message, hint } = misspeltSecurityTagText(misspelt);
      const offset = field.at.text.search(new RegExp(`(?<![A-Za-z0-9_.:-])${misspelt.tag.replace(/[.]/g, '\\.')}(?![A-Za-z0-9_.:-])`, 'i'));
      this.diagnostics.push(warning('FORGE_TAG_TYPO', message, this.at(field.at, Math.max(0, offset)), hint));
    }
    return tags;
  }

  private readTimeout(): number | undefined {
    const field = this.fields.get('Timeout');
    if (!field) return undefined;
    const text = field.value.trim();
    const offset = Math.max(0, field.at.text.indexOf(text));
    const ms = parseDuration(text);
    if (ms === undefined) {
      const hint = /^\d+(\.\d+)?$/.test(text) ? `add a unit: "${text}s" or "${text}ms"` : 'write a duration such as 500ms, 10s or 2m';
      this.error('FORGE_DOCSTRING_TIMEOUT', `invalid timeout "${text}"`, field.at, offset, hint);
      return undefined;
    }
    if (ms <= 0) {
      this.error('FORGE_DOCSTRING_TIMEOUT', 'timeout must be greater than zero', field.at, offset);
      return undefined;
    }
    return ms;
  }
}

function splitTopLevel(text: string): { text: string; offset: number }[] {
  const parts: { text: string; offset: number }[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      parts.push({ text: text.slice(start, i), offset: start });
      start = i + 1;
    }
  }
  parts.push({ text: text.slice(start), offset: start });
  return parts;
}

/**
 * The default a description's "Default: …" gives: `value` when the whole rest of
 * its sentence is one value (a number, true/false, a quoted string, a [list] or
 * {object}, a single word), which is then read as the parameter's type;
 * `prose` when it is words ("Default: the account's currency.").
 */
function descriptionDefault(description: string): { value: string; index: number; prose?: undefined } | { prose: true; value?: undefined; index: number } | undefined {
  const found = /(?:^|[\s(;,.])(Default:)[ \t]*/i.exec(description);
  if (!found) return undefined;
  const index = found.index + found[0].indexOf(found[1]);
  const after = description.slice(found.index + found[0].length);
  // A sentence ends at ".", ";" or ")" before a space, punctuation or the end, or with the description.
  const END = /^\s*(?:[.;)](?=[\s.;,)]|$)|$)/;
  const literal = /^(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]+`|\[[^\]]*\]|\{[^}]*\})/.exec(after);
  if (literal && END.test(after.slice(literal[0].length))) {
    const text = literal[0];
    return { value: text.startsWith('`') ? text.slice(1, -1) : text, index };
  }
  const end = /[.;)](?=[\s.;,)]|$)/.exec(after);
  const sentence = (end ? after.slice(0, end.index) : after).trim();
  if (!sentence || /\s/.test(sentence)) return { prose: true, index };
  return { value: sentence, index };
}

/** Where character `index` of a description joined from lines is, in its line. */
function locateIn(pieces: Param['descriptionAt'], index: number): { line: DocLine; offset: number } {
  const piece = [...pieces].reverse().find((p) => p.start <= index) ?? pieces[0];
  return { line: piece.line, offset: piece.offset + (index - piece.start) };
}

function joinText(a: string, b: string, paragraph: boolean): string {
  if (!a) return b;
  return paragraph ? `${a}\n\n${b}` : `${a} ${b}`;
}

function truncate(text: string): string {
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
