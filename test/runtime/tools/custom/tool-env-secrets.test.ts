/**
 * env_passthrough hands a tool process a variable of the agent's: under a
 * secret-looking name (SERVICE_TOKEN) its value is a credential, remembered
 * for redaction, so a tool that returns its environment hands on
 * [REDACTED]. A value under another name (PROJECT_REGION) is the tool's data.
 */
import { describe, expect, it } from 'vitest';
import { startAgentProcess } from '../../../helpers/agent-process.ts';
import { forgeBin, minimalConfig, writeProject } from '../../../helpers/project.ts';

const TOKEN = 'svc-tok-4f1e2d3c5b6a7988';
const REGION = 'eu-west-region-1';
const showEnv = '"""\nTool: show_env\nDescription: Shows its environment.\nTags: read\n"""\nimport os\n\ndef execute(args):\n    return {"token": os.environ.get("SERVICE_TOKEN"), "region": os.environ.get("PROJECT_REGION")}\n';

const raises = '"""\nTool: connect\nDescription: Connects.\nTags: read\n"""\nimport os\n\ndef execute(args):\n    token = os.environ["SERVICE_TOKEN"]\n    raise PermissionError(f"token {token} was refused")\n';

describe('env_passthrough secrets', () => {
  it('masks the value of a secret-looking passed-through variable in a tool result, not another one', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('env_passthrough: [SERVICE_TOKEN, PROJECT_REGION]\n'), 'tools/show_env.py': showEnv, 'tools/connect.py': raises });
    const agent = await startAgentProcess(process.execPath, [forgeBin, 'run', '--dev', '--port', '0', '--no-auth'], { cwd: project, env: { SERVICE_TOKEN: TOKEN, PROJECT_REGION: REGION } });
    try {
      const response = await fetch(`${agent.url}/tools/show_env`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      const text = await response.text();
      expect(response.status, text).toBe(200);
      expect(JSON.parse(text).value).toEqual({ token: '[REDACTED]', region: REGION });
      expect(text).not.toContain(TOKEN);
      // A Python traceback quoting the value, returned as the tool's error.
      const failed = await (await fetch(`${agent.url}/tools/connect`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).text();
      expect(failed).toContain('PermissionError: token [REDACTED] was refused');
      expect(failed + agent.output()).not.toContain(TOKEN);
    } finally {
      await agent.stop();
    }
  });
});
