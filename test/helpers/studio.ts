/**
 * The studio's test agent: `forge run --dev` on a project with two tools —
 * greet (tagged read, so it runs) and save_note (tagged write, so a chat's
 * call to it waits for an approval) — and the scripted model at llmUrl.
 */
import { startAgentProcess, type AgentProcess } from './agent-process.ts';
import { forgeBin, minimalConfig, writeProject } from './project.ts';

export const greet = `"""\nTool: greet\nDescription: Greets someone, as plainly or as fancily as asked.\nTags: read\n\nInput:\n  name (str): Who to greet.\n  times (int, default=1): How many times.\n  style (enum(plain|fancy), optional): The tone.\n  loud (bool, optional): Shout it.\n"""\n\ndef execute(args):\n    text = ("Hello, " + args["name"]) * args.get("times", 1)\n    if args.get("style") == "fancy":\n        text = "~ " + text + " ~"\n    return {"greeting": text.upper() if args.get("loud") else text}\n`;
export const saveNote = `"""\nTool: save_note\nDescription: Saves a note to notes.txt.\nTags: write\n\nInput:\n  text (str): The note.\n"""\n\ndef execute(args):\n    with open("notes.txt", "a") as f:\n        f.write(args["text"] + "\\n")\n    return {"saved": True, "chars": len(args["text"])}\n`;

/** The agent, up (its url known), and its project dir; the studio's API takes `token` (none: `--no-auth`). */
export async function startStudioAgent(llmUrl: string, token: string | undefined, env: NodeJS.ProcessEnv = {}): Promise<{ agent: AgentProcess; project: string }> {
  const project = writeProject({
    'forge.yaml': minimalConfig(`model:\n  provider: openai\n  name: scripted\n  base_url: ${llmUrl}/v1\n`),
    'tools/greet.py': greet,
    'tools/save_note.py': saveNote,
  });
  const args = [forgeBin, 'run', '--dev', '--port', '0', ...(token === undefined ? ['--no-auth'] : [])];
  const agent = await startAgentProcess(process.execPath, args, { cwd: project, env: { FORGE_AUTH_TOKEN: token, ...env } });
  return { agent, project };
}
