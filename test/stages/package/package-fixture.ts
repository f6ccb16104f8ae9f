/**
 * The fixture both forge package suites use: Debian's docker-registry on
 * loopback with a base image pushed by skopeo (umoci-assembled, with Python),
 * a project with a Python and a TypeScript tool, and a package cache.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { pushBaseImage, runcRun, startRegistry, unpackForRunc, type LoopbackRegistry, type RuncContainer } from '../../helpers/oci.ts';
import { forge, minimalConfig, tempDir, writeProject } from '../../helpers/project.ts';

export interface PackageFixture {
  registry: LoopbackRegistry;
  base: string;
  project: string;
  cacheDir: string;
  env(): NodeJS.ProcessEnv;
  packageJson(args: string[], cwd?: string, extraEnv?: NodeJS.ProcessEnv): Promise<{ digest: string; base: { digest: string; from: string }; size: { total: number; added: number }; outputs: Record<string, string>; durationMs: number }>;
}

export const files = {
  'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n'),
  'tools/echo.py': '"""\nTool: echo\nDescription: Echo a message.\nTags: read\n\nInput:\n  message (str): The message.\n"""\n\ndef execute(args):\n    return {"echo": args["message"]}\n',
  'tools/shout.ts': '/**\n * Tool: shout\n * Description: Upper-cases a message.\n * Tags: read\n *\n * Input:\n *   message (str): The message.\n */\nexport function execute(args: { message: string }) { return args.message.toUpperCase(); }\n',
};

/** Registers the suite's hooks; the fields are set once beforeAll has run. */
export function usePackageFixture(): PackageFixture {
  const fixture: PackageFixture = {
    registry: undefined as unknown as LoopbackRegistry,
    base: '',
    project: '',
    cacheDir: '',
    env: () => ({ FORGE_CACHE_DIR: fixture.cacheDir }),
    async packageJson(args: string[], cwd = fixture.project, extraEnv: NodeJS.ProcessEnv = {}) {
      const result = await forge(['package', '--base', fixture.base, '--json', ...args], cwd, { ...fixture.env(), ...extraEnv });
      expect(result.code, result.stderr + result.stdout).toBe(0);
      return JSON.parse(result.stdout);
    },
  };
  beforeAll(async () => {
    fixture.registry = await startRegistry();
    fixture.base = pushBaseImage(fixture.registry.address, { python: true });
    fixture.project = writeProject(files);
    fixture.cacheDir = tempDir('forge-cache-');
  }, 240_000);
  afterAll(() => fixture.registry?.stop());
  return fixture;
}

/**
 * Resolves with the container's exit code once all it printed has been read. runcRun's `exited` resolves
 * at the process's exit, when its pipes may still hold the last of its output (seen with several
 * containers at once: a tool's answer missing). Here rather than in oci.ts: that file's text names the
 * cached base images, and a change to it has every checkout on the machine assemble them again.
 */
export async function exitedWithOutput(container: RuncContainer): Promise<number | null> {
  const { child } = container;
  await container.exited;
  if (!child.stdout!.readableEnded || !child.stderr!.readableEnded) await new Promise((resolve) => child.once('close', resolve));
  return container.exited;
}

/**
 * Calls a tool in a runc container of the image (`node runtime.mjs call TOOL INPUT`):
 * expects it to exit 0 and returns what it printed. `network: false` keeps the container offline.
 */
export async function callInImage(reference: string, tool: string, input = '{}', options: { network?: boolean } = {}): Promise<string> {
  const container = runcRun(unpackForRunc(reference, ['node', '/opt/agent/runtime.mjs', 'call', tool, input], options));
  try {
    expect(await exitedWithOutput(container), container.output()).toBe(0);
    return container.output();
  } finally {
    await container.stop();
  }
}
