/** Writes a project with many tools for the benchmarks. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface GeneratedProject {
  dir: string;
  pythonTools: number;
  tsTools: number;
}

export function generateProject(dir: string, pythonTools = 100, tsTools = 100): GeneratedProject {
  mkdirSync(join(dir, 'tools'), { recursive: true });
  writeFileSync(join(dir, 'forge.yaml'), 'agent_id: bench-agent\nversion: 1.0.0\ndescription: Benchmark agent.\ntools:\n  - uuid_generate\n');
  for (let i = 0; i < pythonTools; i++) {
    // Even tools define execute() (served by a worker); odd ones are scripts (a process per call).
    const body =
      i % 2 === 0
        ? 'def execute(args):\n    return {"n": args["n"] + 1, "label": args.get("label", "x")}\n'
        : 'import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({"n": args["n"] + 1}))\n';
    writeFileSync(
      join(dir, 'tools', `py_tool_${i}.py`),
      `"""\nTool: py_tool_${i}\nDescription: Python benchmark tool ${i}: adds one to n.\nTags: read\n\nInput:\n  n (int): The number tool ${i} adds one to.\n  label (str, optional): A label for result ${i}. Default: x.\n\nOutput:\n  n (int): n + 1.\n"""\n${body}`,
    );
  }
  for (let i = 0; i < tsTools; i++) {
    writeFileSync(
      join(dir, 'tools', `ts_tool_${i}.ts`),
      `/**\n * Tool: ts_tool_${i}\n * Description: TypeScript benchmark tool ${i}: formats a record.\n * Tags: read\n *\n * Input:\n *   name (str): The name tool ${i} formats.\n *   count (int, default=1): How many.\n *   mode (enum(short|long), optional): Output style.\n */\ninterface Args { name: string; count: number; mode?: 'short' | 'long' }\nexport function execute(args: Args) {\n  const parts: string[] = [];\n  for (let k = 0; k < args.count; k++) parts.push(args.mode === 'long' ? \`\${args.name} #\${k} (tool ${i})\` : args.name);\n  return { text: parts.join(', '), tool: ${i} };\n}\n`,
    );
  }
  return { dir, pythonTools, tsTools };
}
