/**
 * The interpreters the agent's tools start, looked for in the base image
 * before it is packaged: a YAML tool's bash:, sh: and python: steps (and a
 * script: step's shell when it is a program named outright), and Python
 * tools. A base without one would give an image that says it is ready while
 * the tool fails at its first call (FORGE_TOOL_START); here it is an error at
 * the step's file:line instead.
 *
 * Python counts as there when the image gets the Python environment layer
 * (python-layer.ts checks the base's Python itself), else the base's
 * FORGE_PYTHON, else any of the names the runtime tries on PATH
 * (PYTHON_COMMANDS: python3, then python), as the runtime resolves it.
 */
import { join } from 'node:path';
import type { AgentManifest } from '../../runtime/manifest.ts';
import { error, type Diagnostic } from '../../runtime/diagnostics.ts';
import type { YamlStep } from '../../runtime/tools/yaml/definition.ts';
import type { Template } from '../../runtime/tools/yaml/template.ts';
import { PYTHON_COMMANDS } from '../../runtime/tools/custom/python-interpreter.ts';
import { readYamlToolFile } from '../yaml-tool-file.ts';
import type { BaseImage } from './base-image.ts';
import { imagePath, type BaseFiles } from './base-files.ts';
import { formatImageReference } from './image-reference.ts';
import { ownValue } from '../../runtime/own-value.ts';

/** Debian's package of an interpreter, where its name is not the program's. */
const APT_PACKAGE: Record<string, string> = { python: 'python3', python3: 'python3', sh: 'dash' };

export interface InterpreterContext {
  bundleDir: string;
  base: BaseImage;
  files: BaseFiles;
  /** The environment the image will have (FORGE_PYTHON from the venv layer, when there is one). */
  python: { coveredByLayer: boolean };
}

export async function missingInterpreters(agent: AgentManifest, context: InterpreterContext): Promise<Diagnostic[]> {
  const { base, files } = context;
  const path = imagePath(base);
  const baseName = formatImageReference({ ...base.reference, digest: undefined });
  const forgePython = (base.config.config?.Env ?? []).find((e) => e.startsWith('FORGE_PYTHON='))?.slice('FORGE_PYTHON='.length);
  // The Python the runtime resolves: FORGE_PYTHON alone, else the first of its names on PATH.
  const pythons = forgePython ? [forgePython] : PYTHON_COMMANDS;
  const hasPython = context.python.coveredByLayer || pythons.some((p) => files.findProgram(p, path) !== undefined);
  const has = (wanted: Wanted) => (wanted.resolvedPython ? hasPython : files.findProgram(wanted.program, path) !== undefined);
  const hint = (program: string) =>
    `use a base that has it: a Dockerfile "FROM ${baseName}" that installs it (apt-get install -y ${ownValue(APT_PACKAGE, program) ?? program}), pushed to your registry, then --base REGISTRY/IMAGE; or change the step to a program the base has`;
  const shown = (wanted: Wanted) => (wanted.resolvedPython ? pythons.join(' or ') : wanted.program);
  const out: Diagnostic[] = [];
  for (const tool of agent.tools) {
    const source = tool.source;
    if (source?.kind === 'python' && !hasPython) {
      out.push(error('FORGE_PACKAGE_INTERPRETER', `tool "${tool.name}" is a Python tool, and the base image ${baseName} has no ${pythons.join(' or ')} (PATH ${path.join(':')})`, { file: source.path, line: 1 }, hint('python')));
    }
    if (source?.kind !== 'yaml' || !source.interpreters?.length) continue;
    const read = await readYamlToolFile({ absolute: join(context.bundleDir, source.path), display: source.path }, source.path);
    if (!read.spec) continue; // the build read it already; nothing more to say here
    for (const step of read.definition.steps) {
      const wanted = stepProgram(step);
      if (!wanted || has(wanted)) continue;
      const at = read.locate([...step.path, wanted.key]);
      out.push(
        error(
          'FORGE_PACKAGE_INTERPRETER',
          `tool "${tool.name}" runs ${shown(wanted)} (its ${wanted.key}: step "${step.name}"), and the base image ${baseName} has no ${shown(wanted)} (PATH ${path.join(':')})`,
          at,
          hint(wanted.program),
        ),
      );
    }
  }
  return out;
}

/** A program a step starts its script with, and the step's key; `resolvedPython`: whichever Python the runtime resolves (a python: step). */
interface Wanted {
  program: string;
  key: string;
  resolvedPython?: boolean;
}

function stepProgram(step: YamlStep): Wanted | undefined {
  const { action } = step;
  if (action.kind === 'python') return { program: 'python', key: 'python', resolvedPython: true };
  if (action.kind === 'bash' || action.kind === 'sh') return { program: action.kind, key: action.kind };
  if (action.kind !== 'script') return undefined;
  const words = action.interpreter.map(literal);
  // `/usr/bin/env bash {0}`: env is the launcher, bash what must be there.
  const first = words[0] && /(^|\/)env$/.test(words[0]) ? words.slice(1).find((w) => w === undefined || !w.startsWith('-')) : words[0];
  if (!first || first.includes('{0}')) return undefined;
  return { program: first, key: 'script' };
}

/** A word of the interpreter's command with no placeholders, else undefined (it is known only at call time). */
function literal(word: Template): string | undefined {
  return word.segments.every((s) => s.kind === 'text') ? word.segments.map((s) => (s as { text: string }).text).join('') : undefined;
}
