/** `forge tool <subcommand>`: each subcommand in its own file, loaded on use. */
import { listSubcommands, runSubcommand, type Subcommands } from '../subcommands.ts';
import type { SubcommandName } from '../command-names.ts';

const SUBCOMMANDS: Subcommands<SubcommandName<'tool'>> = {
  list: { summary: 'list the project\'s tools (or a scope\'s: --scope user)', load: () => import('./tool-list.ts') },
  describe: { summary: 'show a tool\'s description, inputs and outputs', load: () => import('./tool-describe.ts') },
  run: { summary: 'run a tool from sources, without a build or an LLM', load: () => import('./tool-run.ts') },
  add: { summary: 'write a YAML tool that wraps commands (local, user or global scope)', load: () => import('./tool-add.ts') },
  get: { summary: 'print a tool\'s file', load: () => import('./tool-get.ts') },
  remove: { summary: 'delete a YAML tool', load: () => import('./tool-remove.ts') },
  promote: { summary: 'write a tool the running agent forged into tools/ (YAML or JS), for the next build', load: () => import('./tool-promote.ts') },
  forged: { summary: 'list, show or remove the tools the running agent forged (.forge/forged/)', load: () => import('./tool-forged.ts') },
  check: { summary: 'check what tools need: dependencies, versions, cycles, depth', load: () => import('./tool-check.ts') },
  install: { summary: 'install a folder\'s, git repository\'s or npm tarball\'s tools (--deps: and what they need)', load: () => import('./tool-install.ts') },
};

/** `forge tool add --help` prints add's usage, not this one. */
export const delegatesHelp = true;

export const usage = `usage: forge tool <subcommand> [options]

Works on the project's sources: no build and no LLM needed.

subcommands:
${listSubcommands(SUBCOMMANDS)}

Tools are found in the project's tool_dirs (the local scope), then in the
user scope (~/.forge/tools, or $FORGE_HOME/tools), then in the global scope
($FORGE_GLOBAL_TOOLS); scope/name picks one. Run "forge tool <subcommand>
--help" for a subcommand's options.

YAML tools (tools/NAME.yaml):
  description: Greets someone.
  tags: [read]
  parameters:
    name: { type: string, description: Who to greet }
  bash: echo "Hello, {name}!"         # or sh:, python:, run:, script: + shell:, steps:

  {PARAM} inserts a parameter, escaped for where it stands (bare, '...', "...",
  a Python string, one run: argument); {step.output} / .stdout / .stderr /
  .exit-code insert an earlier step's results; {{ and }} are literal braces;
  {RAW:PARAM} inserts unescaped (the build warns). A step may call a tool:
  "tool: summarize" with args:, output_var:, when:, cache:, continue-on-error:.

examples:
  forge tool list --category custom
  forge tool list --scope user
  forge tool describe word_count
  forge tool run word_count --param text="hello world"
  forge tool run greet --param name="O'Brien" --show-command
  forge tool add greet --description "Greets someone." --bash 'echo "Hello, {name}!"' --parameter name "Who to greet" --tag read
  forge tool get greet
  forge tool check
  forge tool remove greet --scope user
  forge tool forged list
  forge tool promote add_numbers
  forge tool install file:///srv/git/text-tools.git --scope user --deps
`;

export function run(argv: string[]): Promise<number> {
  return runSubcommand('tool', SUBCOMMANDS, argv);
}
