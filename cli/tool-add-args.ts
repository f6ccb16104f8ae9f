/**
 * `forge tool add`'s arguments. Some options take several words
 * (`--parameter NAME DESC type=int required=false`, `--step NAME COMMAND`),
 * which node's parseArgs cannot express, so they are read here.
 */
import { didYouMean } from '../runtime/suggest.ts';
import { PARAMETER_TYPES } from '../runtime/tools/yaml/parameters.ts';
import { isScopeName, type ScopeName } from '../stages/scopes.ts';
import { UsageError } from './usage-error.ts';
import { parseTimeout } from './args.ts';
import { checkToolName } from '../runtime/tools/names.ts';

export interface AddedParameter {
  name: string;
  description: string;
  type: string;
  required?: boolean;
  default?: unknown;
  pattern?: string;
  minimum?: number;
  maximum?: number;
}

export interface AddedStep {
  name: string;
  kind: 'bash' | 'sh' | 'python' | 'run' | 'tool';
  command: string;
}

export interface ToolAddArgs {
  name: string;
  description?: string;
  version?: string;
  steps: AddedStep[];
  parameters: AddedParameter[];
  tags: string[];
  platforms: string[];
  timeout?: number;
  env: Record<string, string>;
  scope: ScopeName;
  force: boolean;
  json: boolean;
  config?: string;
}

const SINGLE_ACTIONS = { '--bash': 'bash', '--sh': 'sh', '--python': 'python', '--run': 'run' } as const;
const OPTIONS = ['--description', '--version', ...Object.keys(SINGLE_ACTIONS), '--step', '--parameter', '--param', '--tag', '--platform', '--timeout', '--env', '--scope', '--local', '--user', '--global', '--force', '--json', '--verbose', '--config'];
const STEP_PREFIX = /^(bash|sh|python|run|tool):\s?/;

export function parseToolAddArgs(argv: readonly string[]): ToolAddArgs {
  const out: ToolAddArgs = { name: '', steps: [], parameters: [], tags: [], platforms: [], env: {}, scope: 'local', force: false, json: false };
  let single: AddedStep | undefined;
  let i = 0;
  const take = (option: string): string => {
    const value = argv[++i];
    if (value === undefined) throw new UsageError(`${option} needs a value`);
    return value;
  };
  for (; i < argv.length; i++) {
    const raw = argv[i];
    // --option=value is the same as --option value.
    const eq = raw.startsWith('--') ? raw.indexOf('=') : -1;
    const option = eq > 0 ? raw.slice(0, eq) : raw;
    const inline = eq > 0 ? raw.slice(eq + 1) : undefined;
    const value = (name: string) => inline ?? take(name);
    switch (option) {
      case '--description':
      case '-d':
        out.description = value(option);
        break;
      case '--version':
        out.version = value(option);
        break;
      case '--bash':
      case '--sh':
      case '--python':
      case '--run': {
        if (single) throw new UsageError(`give one of --bash, --sh, --python or --run (or several --step)`);
        single = { name: 'main', kind: SINGLE_ACTIONS[option], command: value(option) };
        break;
      }
      case '--step': {
        const name = value(option);
        const command = take(option);
        const prefix = STEP_PREFIX.exec(command);
        out.steps.push({ name, kind: (prefix?.[1] as AddedStep['kind']) ?? 'bash', command: prefix ? command.slice(prefix[0].length) : command });
        break;
      }
      case '--parameter':
      case '--param': {
        const name = value(option);
        const description = take(option);
        const parameter: AddedParameter = { name, description, type: 'string' };
        const settings: Record<string, string> = {};
        while (argv[i + 1] !== undefined && /^(type|required|default|pattern|minimum|maximum)=/.test(argv[i + 1])) {
          const setting = argv[++i];
          const at = setting.indexOf('=');
          settings[setting.slice(0, at)] = setting.slice(at + 1);
        }
        if (settings.type !== undefined) {
          const type = ({ str: 'string', int: 'integer', float: 'number', bool: 'boolean', list: 'array' } as Record<string, string>)[settings.type] ?? settings.type;
          if (!(PARAMETER_TYPES as readonly string[]).includes(type)) throw new UsageError(`--parameter ${name}: unknown type "${settings.type}"`, [didYouMean(settings.type, PARAMETER_TYPES), `types: ${PARAMETER_TYPES.join(', ')}`].filter(Boolean).join(' '));
          parameter.type = type;
        }
        if (settings.required !== undefined) {
          if (!/^(true|false|yes|no)$/i.test(settings.required)) throw new UsageError(`--parameter ${name}: required= takes true or false`);
          parameter.required = /^(true|yes)$/i.test(settings.required);
        }
        if (settings.default !== undefined) parameter.default = typedDefault(name, parameter.type, settings.default);
        // Checked with the rest of the file, as the build checks it (a pattern on a number, one with a lookaround).
        if (settings.pattern !== undefined) parameter.pattern = settings.pattern;
        for (const bound of ['minimum', 'maximum'] as const) {
          const text = settings[bound];
          if (text === undefined) continue;
          const n = Number(text);
          if (text.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--parameter ${name}: ${bound}=${text} is not a number`);
          parameter[bound] = n;
        }
        out.parameters.push(parameter);
        break;
      }
      case '--tag':
        out.tags.push(...value(option).split(',').map((t) => t.trim()).filter(Boolean));
        break;
      case '--platform':
        out.platforms.push(...value(option).split(',').map((t) => t.trim()).filter(Boolean));
        break;
      case '--timeout': {
        out.timeout = parseTimeout(value(option));
        break;
      }
      case '--env': {
        const pair = value(option);
        const at = pair.indexOf('=');
        if (at <= 0) throw new UsageError(`--env "${pair}" must look like NAME=VALUE`);
        out.env[pair.slice(0, at)] = pair.slice(at + 1);
        break;
      }
      case '--scope': {
        const scope = value(option);
        if (!isScopeName(scope)) throw new UsageError(`unknown scope "${scope}"`, 'scopes: local (the project\'s tools/), user (~/.forge/tools), global');
        out.scope = scope;
        break;
      }
      // cycod's scope flags.
      case '-l':
      case '--local':
        out.scope = 'local';
        break;
      case '-u':
      case '--user':
        out.scope = 'user';
        break;
      case '-g':
      case '--global':
        out.scope = 'global';
        break;
      case '--force':
        out.force = true;
        break;
      case '--json':
        out.json = true;
        break;
      case '--verbose':
      case '-v':
        break; // forge's main reads it (stack traces); nothing more to say here
      case '--config':
      case '-c':
        out.config = value(option);
        break;
      default:
        if (raw.startsWith('-')) throw new UsageError(`unknown option ${raw}`, didYouMean(option, OPTIONS));
        if (out.name) throw new UsageError(`unexpected "${raw}"`, 'quote commands and descriptions that contain spaces');
        out.name = raw;
    }
  }
  if (!out.name) throw new UsageError('missing tool name');
  // Before a file name is made from it: a name no tool may have is the command line's mistake.
  const nameProblem = checkToolName(out.name, 'custom');
  if (nameProblem) throw new UsageError(nameProblem, `e.g. ${out.name.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/_{2,}/g, '_').slice(0, 64) || 'my_tool'}`);
  if (single && out.steps.length) throw new UsageError('give either one of --bash, --sh, --python, --run, or --step (several times), not both');
  if (single) out.steps.push(single);
  if (out.steps.length === 0) throw new UsageError('the tool needs something to run', 'add --bash "...", --python "...", --run "..." or --step NAME "..."');
  if (!out.description) throw new UsageError('missing --description', 'models choose tools by their description');
  return out;
}

function typedDefault(name: string, type: string, text: string): unknown {
  switch (type) {
    case 'integer':
    case 'number': {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n) || (type === 'integer' && !Number.isInteger(n))) throw new UsageError(`--parameter ${name}: default=${text} is not ${type === 'integer' ? 'an integer' : 'a number'}`);
      return n;
    }
    case 'boolean':
      if (!/^(true|false)$/i.test(text)) throw new UsageError(`--parameter ${name}: default=${text} is not true or false`);
      return /^true$/i.test(text);
    case 'array':
    case 'object':
      try {
        return JSON.parse(text);
      } catch {
        if (type === 'array') return text.split(',').map((s) => s.trim());
        throw new UsageError(`--parameter ${name}: default=${text} is not JSON`);
      }
    default:
      return text;
  }
}
