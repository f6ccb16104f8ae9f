/**
 * The layers: cli → stages → runtime, never back; and the folders directly
 * under runtime/ import one another without a cycle (a cycle between two
 * folders means neither is below the other). Only imports that exist at
 * run time count: `import type` is erased. Dynamic import() counts.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/project.ts';

/**
 * Imports that still point up a layer, each with what removes it. They are
 * left out of the cycle check; the test fails on a cycle without them, and
 * on a listed import that is gone (so the list only shrinks).
 */
const KNOWN_UPWARD: Record<string, string> = {};

interface SourceFile {
  path: string;
  imports: { target: string; typeOnly: boolean }[];
}

function sources(dir: string): SourceFile[] {
  const files: SourceFile[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) files.push({ path, imports: importsOf(path) });
    }
  };
  walk(join(repoRoot, dir));
  return files;
}

function importsOf(file: string): SourceFile['imports'] {
  const text = readFileSync(file, 'utf8');
  const found: SourceFile['imports'] = [];
  for (const m of text.matchAll(/^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?'(\.{1,2}\/[^']+)'/gm)) found.push({ target: resolve(dirname(file), m[3]), typeOnly: m[2] !== undefined });
  for (const m of text.matchAll(/\bimport\(\s*'(\.{1,2}\/[^']+)'\s*\)/g)) found.push({ target: resolve(dirname(file), m[1]), typeOnly: false });
  return found;
}

const layer = (path: string) => relative(repoRoot, path).split(sep)[0];

describe('layers', () => {
  it('points cli → stages → runtime: runtime imports neither, stages does not import cli', () => {
    const backwards: string[] = [];
    for (const [from, forbidden] of [['runtime', ['stages', 'cli']], ['stages', ['cli']]] as const) {
      for (const file of sources(from)) {
        for (const { target } of file.imports) if ((forbidden as readonly string[]).includes(layer(target))) backwards.push(`${relative(repoRoot, file.path)} → ${relative(repoRoot, target)}`);
      }
    }
    expect(backwards).toEqual([]);
  });

  it('keeps the plumbing below the tools: exec, guard, net, state, telemetry and verify import tools/ for types only', () => {
    const below = ['exec', 'guard', 'net', 'state', 'telemetry', 'verify'];
    const upward: string[] = [];
    for (const folder of below) {
      for (const file of sources(join('runtime', folder))) {
        for (const { target, typeOnly } of file.imports) {
          if (!typeOnly && relative(join(repoRoot, 'runtime'), target).split(sep)[0] === 'tools') upward.push(`${relative(repoRoot, file.path)} → ${relative(repoRoot, target)}`);
        }
      }
    }
    expect(upward).toEqual([]);
  });

  it('has no import cycle between the folders under runtime/', () => {
    const runtimeDir = join(repoRoot, 'runtime');
    // A node per folder directly under runtime/, and per file at its top.
    const node = (path: string) => relative(runtimeDir, path).split(sep)[0];
    const edges = new Map<string, Set<string>>();
    const why = new Map<string, string>();
    for (const file of sources('runtime')) {
      const from = node(file.path);
      for (const { target, typeOnly } of file.imports) {
        const to = node(target);
        if (typeOnly || to === from) continue;
        if (!edges.has(from)) edges.set(from, new Set());
        edges.get(from)!.add(to);
        why.set(`${from}→${to}`, `${relative(repoRoot, file.path)} imports ${relative(repoRoot, target)}`);
      }
    }
    expect(Object.keys(KNOWN_UPWARD).filter((edge) => !why.has(edge))).toEqual([]);
    for (const edge of Object.keys(KNOWN_UPWARD)) {
      const [from, to] = edge.split('→');
      edges.get(from)?.delete(to);
    }
    const cycles = stronglyConnected(edges).filter((c) => c.length > 1);
    // Each cycle with the imports that make it, to say where to cut.
    const explained = cycles.map((c) => `${c.sort().join(', ')}: ${c.flatMap((a) => c.filter((b) => edges.get(a)?.has(b)).map((b) => why.get(`${a}→${b}`))).join('; ')}`);
    expect(explained).toEqual([]);
  });
});

/** Tarjan's algorithm: the strongly connected components of a directed graph. */
function stronglyConnected(edges: Map<string, Set<string>>): string[][] {
  const nodes = new Set([...edges.keys(), ...[...edges.values()].flatMap((s) => [...s])]);
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      components.push(component);
    }
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return components;
}
