import { readdir, stat } from 'node:fs/promises';
import { readVerified } from '../../guard/verified-open.ts';
import { parse as parseYaml } from '../../vendor/yaml.ts';
import { PathGuard, PathRefusedError } from '../../guard/path-guard.ts';
import { didYouMean } from '../../suggest.ts';
import { fsFailure, guarded, isFailure } from '../fs-results.ts';
import { fail, ok } from '../model.ts';
import { defineBuiltin } from './define.ts';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

interface Skill {
  name: string;
  path: string;
}

export default defineBuiltin({
  spec: {
    name: 'read_skill',
    description: [
      'Load a skill: a Markdown document of instructions kept in the project\'s skills folder (config `dir`, default "skills/" in the working directory), either skills/<name>.md or skills/<name>/SKILL.md.',
      'Returns its name, description (from YAML front matter, if any), path and content (without the front matter). Without a `name`, lists the available skills with their descriptions. Names are plain: no "/", "\\\\" or "..".',
    ].join('\n'),
    category: 'builtin',
    tags: ['read'],
    inputSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 131, description: 'The skill to load; omit it to list the skills.' },
      },
    },
  },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { dir: { type: 'string', minLength: 1, default: 'skills', description: 'The skills folder, relative to the working directory.' } },
  },
  create(host) {
    const guard = new PathGuard(host.workDir);
    const dir = host.config.dir.replace(/\/+$/, '');

    const listSkills = async (): Promise<Skill[]> => {
      const root = guard.resolve(dir);
      const entries = await readdir(root.absolute, { withFileTypes: true }).catch(() => []);
      const skills: Skill[] = [];
      for (const entry of entries) {
        if (entry.isFile() && entry.name.endsWith('.md')) skills.push({ name: entry.name.slice(0, -3), path: `${dir}/${entry.name}` });
        else if (entry.isDirectory() && (await stat(`${root.absolute}/${entry.name}/SKILL.md`).catch(() => undefined))?.isFile()) {
          skills.push({ name: entry.name, path: `${dir}/${entry.name}/SKILL.md` });
        }
      }
      return skills.sort((a, b) => (a.name < b.name ? -1 : 1));
    };

    return {
      async execute(args) {
        const { name: given } = args;
        try {
          if (given === undefined) {
            const skills = await listSkills();
            const described = [];
            for (const skill of skills) {
              const { meta, body } = frontMatter(await readVerified(guard, guard.resolve(skill.path).absolute, skill.path).then((r) => r.bytes.toString('utf8'), () => ''));
              described.push({ ...skill, description: meta.description ?? firstLine(body) });
            }
            return ok({ skills: described });
          }
          const name = given.replace(/\.md$/i, '');
          if (!NAME.test(name) || name.includes('..')) {
            return fail('FORGE_SKILL_NAME', `"${given}" is not a skill name`, 'skill names are plain names such as "code-review": no "/", "\\\\" or ".."');
          }
          for (const candidate of [`${dir}/${name}.md`, `${dir}/${name}/SKILL.md`]) {
            const target = guarded(guard, candidate);
            if (isFailure(target)) return target;
            let text: string;
            try {
              text = (await readVerified(guard, target.absolute, candidate)).bytes.toString('utf8');
            } catch (err) {
              const code = (err as NodeJS.ErrnoException).code;
              if (code === 'ENOENT' || code === 'ENOTDIR') continue;
              return fsFailure(err, candidate);
            }
            const { meta, body } = frontMatter(text);
            return ok({ name, path: target.relative, ...(meta.description ? { description: meta.description } : {}), content: body });
          }
          const known = (await listSkills()).map((s) => s.name);
          return fail('FORGE_SKILL_NOT_FOUND', `no skill named "${name}" in ${dir}/`, didYouMean(name, known) ?? (known.length ? `the skills are: ${known.join(', ')}` : `${dir}/ holds no skills`));
        } catch (err) {
          if (err instanceof PathRefusedError) return fail(err.code, err.message, err.hint);
          throw err;
        }
      },
    };
  },
});

const MAX_FRONT_MATTER = 16 * 1024;

/** YAML front matter between --- lines at the top, and the Markdown after it. */
function frontMatter(text: string): { meta: { description?: string }; body: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!match) return { meta: {}, body: text };
  // A skill's front matter is a few lines: past 16 kB it is not parsed (875 kB of it held the agent's thread 2.6 s, at
  // every listing of the skills), and the skill has no description from it.
  if (match[1].length > MAX_FRONT_MATTER) return { meta: {}, body: text.slice(match[0].length) };
  let meta: { description?: unknown } = {};
  try {
    meta = (parseYaml(match[1]) as { description?: unknown }) ?? {};
  } catch {
    // Not YAML after all: treat it as content.
    return { meta: {}, body: text };
  }
  return { meta: typeof meta.description === 'string' ? { description: meta.description } : {}, body: text.slice(match[0].length) };
}

function firstLine(body: string): string {
  return body.split('\n').find((l) => l.trim())?.replace(/^#+\s*/, '').trim() ?? '';
}
