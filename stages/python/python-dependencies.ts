/**
 * The Python packages an agent's tools need: every Python tool's PEP 723
 * block, plus requirements.txt beside forge.yaml. One environment serves
 * every Python process, so the lists are merged (sorted, deduplicated);
 * agent.json records the result and where each came from.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Diagnostic } from '../../runtime/diagnostics.ts';
import type { PythonDependencies } from '../../runtime/manifest.ts';
import { sourceBytes, type SourceFile } from '../discover-tools.ts';
import { readScriptMetadata } from './inline-metadata.ts';
import { readRequirementsFile } from './requirements-file.ts';

export const REQUIREMENTS_FILE = 'requirements.txt';

export interface PythonDependencyFacts {
  dependencies?: PythonDependencies;
  diagnostics: Diagnostic[];
  /** Files read (for the build cache). */
  inputs: string[];
}

/** `files`: the project's Python tool files (their text as the docstrings were parsed from, when it was read). */
export function collectPythonDependencies(root: string, files: readonly Pick<SourceFile, 'absolute' | 'content'>[], cwd = process.cwd()): PythonDependencyFacts {
  const diagnostics: Diagnostic[] = [];
  const declaredIn = new Map<string, Set<string>>();
  const add = (requirement: string, where: string) => {
    const key = requirement.trim().replace(/\s+/g, ' ');
    if (!declaredIn.has(key)) declaredIn.set(key, new Set());
    declaredIn.get(key)!.add(where);
  };
  const inputs: string[] = [];
  const byPath = new Map(files.map((file) => [file.absolute, file]));
  for (const path of [...byPath.keys()].sort()) {
    const display = relative(cwd, path) || path;
    const { metadata, diagnostics: found } = readScriptMetadata(sourceBytes(byPath.get(path)!).toString('utf8'), display);
    diagnostics.push(...found);
    for (const dep of metadata?.dependencies ?? []) add(dep, relative(root, path).split('\\').join('/'));
  }
  const requirementsFile = join(root, REQUIREMENTS_FILE);
  if (existsSync(requirementsFile)) {
    inputs.push(requirementsFile);
    const { requirements, diagnostics: found } = readRequirementsFile(readFileSync(requirementsFile, 'utf8'), relative(cwd, requirementsFile) || requirementsFile);
    diagnostics.push(...found);
    for (const r of requirements) add(r, REQUIREMENTS_FILE);
  }
  if (declaredIn.size === 0) return { diagnostics, inputs };
  const dependencies = [...declaredIn.keys()].sort();
  return {
    dependencies: { dependencies, declared_in: Object.fromEntries(dependencies.map((d) => [d, [...declaredIn.get(d)!].sort()])) },
    diagnostics,
    inputs,
  };
}

/** requirements.txt text for pip (the Dockerfile installs from it). */
export function requirementsText(deps: PythonDependencies): string {
  return deps.dependencies.join('\n') + '\n';
}
