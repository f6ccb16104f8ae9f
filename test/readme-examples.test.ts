/**
 * README.md's examples, as tests: a copied example must work. Every
 * ```python / ```ts / ```js / ```yaml block carries a marker on the line
 * before it (an HTML comment, invisible on GitHub):
 *
 *   <!-- test: file=tools/x.py [project=example] [enable=a,b] [seed=PATH:TEXT] [run=NAME args=JSON] -->
 *   <!-- test: file=forge.yaml append [check=schema] -->
 *   <!-- test: skip REASON -->
 *
 * `file=` is where the block goes in a fresh project (the minimal one, or a
 * copy of this repository's example agent with project=example); `append`
 * adds the block to the project's forge.yaml. The project must pass
 * `forge validate` (or, with check=schema, forge.yaml's JSON schema: for
 * blocks that name services no test can reach). `run=` then runs the tool
 * with `args` and expects success.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createAjv } from '../runtime/tools/validation.ts';
import { forge, minimalConfig, repoRoot, tempDir } from './helpers/project.ts';

interface Block {
  line: number;
  lang: string;
  code: string;
  marker?: string;
}

const TESTED_LANGS = new Set(['python', 'py', 'ts', 'typescript', 'js', 'javascript', 'yaml', 'yml']);

function readmeBlocks(text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end])) end++;
    const before = lines.slice(0, i).reverse().find((l) => l.trim() !== '');
    const marker = before && /^<!--\s*test:\s*(.*?)\s*-->$/.exec(before.trim())?.[1];
    blocks.push({ line: i + 1, lang: open[1], code: lines.slice(i + 1, end).join('\n') + '\n', marker: marker || undefined });
    i = end;
  }
  return blocks;
}

interface Marker {
  file?: string;
  append: boolean;
  project: 'minimal' | 'example';
  enable: string[];
  seed?: [string, string];
  check: 'validate' | 'schema';
  run?: string;
  args?: string;
}

function parseMarker(text: string): Marker | 'skip' {
  if (/^skip\b/.test(text)) return 'skip';
  const get = (key: string) => new RegExp(`(?:^|\\s)${key}=(\\S+)`).exec(text)?.[1];
  const seed = get('seed');
  return {
    file: get('file'),
    append: /(?:^|\s)append(?:\s|$)/.test(text),
    project: get('project') === 'example' ? 'example' : 'minimal',
    enable: get('enable')?.split(',') ?? [],
    seed: seed ? [seed.slice(0, seed.indexOf(':')), seed.slice(seed.indexOf(':') + 1)] : undefined,
    check: get('check') === 'schema' ? 'schema' : 'validate',
    run: get('run'),
    // args= runs to the end of the comment: JSON may hold spaces.
    args: /(?:^|\s)args=(.*)$/.exec(text)?.[1],
  };
}

function projectFor(marker: Marker, block: Block): string {
  const dir = tempDir('forge-readme-');
  if (marker.project === 'example') {
    cpSync(join(repoRoot, 'forge.yaml'), join(dir, 'forge.yaml'));
    cpSync(join(repoRoot, 'tools'), join(dir, 'tools'), { recursive: true });
  } else {
    const enabled = marker.enable.length ? `tools:\n${marker.enable.map((t) => `  - ${t}\n`).join('')}` : '';
    writeFileSync(join(dir, 'forge.yaml'), minimalConfig(enabled));
    mkdirSync(join(dir, 'tools'));
  }
  if (marker.seed) writeFileSync(join(dir, marker.seed[0]), marker.seed[1]);
  const file = join(dir, marker.file!);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, marker.append ? `${readFileSync(file, 'utf8')}\n${block.code}` : block.code);
  return dir;
}

const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const blocks = readmeBlocks(readme).filter((b) => TESTED_LANGS.has(b.lang));
const tested = blocks.flatMap((b) => {
  const marker = b.marker ? parseMarker(b.marker) : undefined;
  return marker && marker !== 'skip' ? [{ block: b, marker }] : [];
});

describe('README.md examples', () => {
  it('marks every tool and config block as tested or skipped (with a reason)', () => {
    const unmarked = blocks.filter((b) => !b.marker).map((b) => `README.md:${b.line} (${b.lang})`);
    expect(unmarked, 'add <!-- test: ... --> (or <!-- test: skip REASON -->) on the line before each block').toEqual([]);
    expect(blocks.filter((b) => b.marker && parseMarker(b.marker) === 'skip' && !/^skip\s+\S/.test(b.marker)).map((b) => b.line)).toEqual([]);
    expect(tested.length).toBeGreaterThanOrEqual(5);
    for (const { block, marker } of tested) expect(marker.file, `README.md:${block.line}: the marker names no file=`).toBeDefined();
  });

  it('the composed example (shout_file) fails when a write it makes is refused, as its comment says', async () => {
    const example = tested.find(({ marker }) => marker.file === 'tools/shout_file.ts');
    expect(example).toBeDefined();
    // Without its single confirmation, the write is asked for on its own, and nobody (no terminal, no --yes) approves it.
    const dir = projectFor(example!.marker, { ...example!.block, code: example!.block.code.replace(/^ \* Single Confirmation:.*\n/m, '') });
    const ran = await forge(['tool', 'run', 'shout_file', '--input', example!.marker.args ?? '{}', '--json'], dir);
    expect(ran.code, ran.stdout).toBe(1);
    expect(JSON.parse(ran.stdout)).toMatchObject({ ok: false, error: { message: expect.stringContaining('"file_write" needs a person\'s confirmation') } });
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('hello');
  });

  for (const { block, marker } of tested) {
    const label = `README.md:${block.line} ${marker.file}${marker.append ? ' (appended)' : ''}${marker.run ? `, runs ${marker.run}` : ''}`;
    it(label, async () => {
      const dir = projectFor(marker, block);
      if (marker.check === 'schema') {
        const ajv = createAjv();
        const validate = ajv.compile(JSON.parse(readFileSync(join(repoRoot, 'schemas', 'forge.schema.json'), 'utf8')));
        const config = parse(readFileSync(join(dir, 'forge.yaml'), 'utf8'));
        expect(validate(config), ajv.errorsText(validate.errors)).toBe(true);
        return;
      }
      const validated = await forge(['validate'], dir);
      expect(validated.code, `${label}\n${validated.stdout}${validated.stderr}`).toBe(0);
      expect(validated.stderr).not.toMatch(/✘|▲/);
      if (marker.run) {
        const ran = await forge(['tool', 'run', marker.run, '--input', marker.args ?? '{}', '--yes'], dir);
        expect(ran.code, `${label}\n${ran.stdout}${ran.stderr}`).toBe(0);
      }
    });
  }
});
