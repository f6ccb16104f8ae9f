/**
 * A YAML tool after loading: every template parsed, every script's
 * placeholders placed, every reference checked. The runtime runs this; the
 * build reports the problems found while making it.
 */
import type { DiagnosticCode } from '../../diagnostic-codes.ts';
import type { JSONSchema } from '../model.ts';
import { TOOL_NAME_PATTERN } from '../names.ts';
import type { Condition } from './condition.ts';
import type { CompiledScript } from './script.ts';
import type { JsonPlace, Template } from './template.ts';

export type PathSegment = string | number;

/** Something wrong in a YAML tool file, at a path into its data (and an offset into the string there). */
export interface DefinitionProblem {
  severity: 'error' | 'warning';
  code: DiagnosticCode;
  message: string;
  hint?: string;
  path: PathSegment[];
  offset?: number;
  /** Point at the key rather than the value (a misspelt or misplaced field). */
  at?: 'key';
}

export interface EnvironmentEntry {
  name: string;
  value: Template;
}

/** Argument values of a tool step: strings are templates, anything else is passed as written. */
export type ArgTemplate = Template | { literal: unknown } | { object: Record<string, ArgTemplate> } | { array: ArgTemplate[] };

export type StepAction =
  | { kind: 'bash' | 'sh' | 'python'; script: CompiledScript }
  | { kind: 'run'; argv: Template[] }
  | {
      kind: 'script';
      /** Compiled when the interpreter is a shell or Python; otherwise a template that may hold RAW placeholders only. */
      body: CompiledScript | Template;
      /** The interpreter's command; `{0}` in it is the script file. */
      interpreter: Template[];
      extension: string;
    }
  | { kind: 'tool'; tool: string; scope?: string; args?: Record<string, ArgTemplate>; input: Template };

export interface YamlStep {
  name: string;
  action: StepAction;
  when?: Condition;
  /** The condition as written, for --show-command. */
  whenSource?: string;
  continueOnError: boolean;
  cache: boolean;
  outputVar?: string;
  environment: EnvironmentEntry[];
  workingDirectory?: Template;
  /** What a process step reads on stdin (cycod's `input:`). */
  stdin?: Template;
  /** The step's own time limit (within the tool's). */
  timeoutMs?: number;
  /** Earlier steps whose results this step uses (it waits for them when steps run in parallel). */
  needs: string[];
  /** Where the step is in the file, for messages: ['steps', 2]. */
  path: PathSegment[];
}

export interface ToolDependency {
  name: string;
  scope?: string;
  /** A semver range (`^1.0.0`), when one is given. */
  range?: string;
  /** As written: `user/summarize@^1.0.0`. */
  text: string;
  path: PathSegment[];
}

export const PLATFORMS = ['linux', 'macos', 'windows'] as const;
export type Platform = (typeof PLATFORMS)[number];

export interface YamlToolDefinition {
  name: string;
  description: string;
  version?: string;
  category: 'custom' | 'dev';
  tags: string[];
  platforms?: Platform[];
  timeoutMs?: number;
  workingDirectory?: Template;
  environment: EnvironmentEntry[];
  inputSchema: JSONSchema;
  steps: YamlStep[];
  parallel: boolean;
  output?: Template;
  /** When output: is written as JSON: where each of its placeholders stands (in a string or as a value), found once when the tool loads. */
  outputJson?: JsonPlace[];
  dependencies: ToolDependency[];
  singleConfirmation: boolean;
  /** Boolean parameters that stand for a command-line flag: {NAME} renders `on` when true, `off` (often nothing) when false. */
  flags?: Record<string, { on: string; off: string }>;
  /** The tools its steps call, as written (`summarize`, `user/summarize`). */
  toolSteps: { name: string; scope?: string; path: PathSegment[] }[];
}

/** The platform Forge is running on, in the names YAML tools use. */
export function currentPlatform(): Platform {
  return process.platform === 'darwin' ? 'macos' : process.platform === 'win32' ? 'windows' : 'linux';
}

/** Why a tool made for `platforms` is not registered here, or undefined when it runs here. */
export function platformMismatch(platforms: readonly Platform[] | undefined): string | undefined {
  return platforms && !platforms.includes(currentPlatform()) ? `runs on ${platforms.join(', ')}, not on ${currentPlatform()}` : undefined;
}

export interface ToolReference {
  scope?: string;
  name: string;
  range?: string;
}

/** `user/summarize@^1.0.0` → its parts. */
export function parseToolReference(text: string): ToolReference {
  const at = text.indexOf('@');
  const ref = at < 0 ? text : text.slice(0, at);
  const range = at < 0 ? undefined : text.slice(at + 1);
  const slash = ref.indexOf('/');
  return slash < 0 ? { name: ref, range } : { scope: ref.slice(0, slash), name: ref.slice(slash + 1), range };
}

/** A name a tool can have and, if given, a scope-shaped word (which scope it is, the build checks). */
export function isWellFormedReference(ref: ToolReference): boolean {
  return TOOL_NAME_PATTERN.test(ref.name) && (ref.scope === undefined || /^[a-z]+$/.test(ref.scope));
}
