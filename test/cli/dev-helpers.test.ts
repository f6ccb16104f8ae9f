/**
 * Which tool files a broken helper module takes down (cli/dev-helpers.ts),
 * read from the import lines: Python's relative imports resolve as Python
 * resolves them, one folder up for each dot after the first.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesNeedingBrokenHelpers } from '../../cli/dev-helpers.ts';
import { error } from '../../runtime/diagnostics.ts';
import type { Project } from '../../stages/load-project.ts';
import { writeProject } from '../helpers/project.ts';

const helper = 'def help():\n    return 1\n';
/** The tool files (relative to tools/) that need the broken helper (relative to tools/). */
function needing(files: Record<string, string>, broken: string): string[] {
  const root = writeProject(Object.fromEntries(Object.entries(files).map(([path, text]) => [`tools/${path}`, text])));
  const tools = join(root, 'tools');
  const project = { config: { root, toolDirs: [{ path: 'tools', absolute: tools }] } } as unknown as Project;
  const found = filesNeedingBrokenHelpers(new Map([[join(tools, broken), [error('FORGE_PY_SYNTAX', `${broken} does not compile`)]]]), project);
  return [...found.keys()].map((file) => file.slice(tools.length + 1)).sort();
}

describe('helper modules a Python tool imports', () => {
  // Each layout has a decoy beside the tool, where a relative import that ignored its dots would look.
  const layout = {
    'pkg/__init__.py': '',
    'pkg/shared.py': helper,
    'pkg/util/__init__.py': '',
    'pkg/util/helper.py': helper,
    'pkg/sub/__init__.py': '',
    'pkg/sub/shared.py': helper,
    'pkg/sub/util/helper.py': helper,
    'pkg/sub/deep/__init__.py': '',
    'pkg/sub/deep/top.py': helper,
    'top.py': helper,
    'pkg/sub/up_one.py': 'from .. import shared\n',
    'pkg/sub/up_one_pkg.py': 'from ..util import helper\n',
    'pkg/sub/up_one_dotted.py': 'from ..util.helper import help\n',
    'pkg/sub/here.py': 'from . import shared\n',
    'pkg/sub/deep/up_two.py': 'from ... import shared, top\n',
  };

  it.each([
    ['pkg/shared.py', ['pkg/sub/deep/up_two.py', 'pkg/sub/up_one.py']],
    ['pkg/sub/shared.py', ['pkg/sub/here.py']],
    ['pkg/util/helper.py', ['pkg/sub/up_one_dotted.py', 'pkg/sub/up_one_pkg.py']],
    ['pkg/sub/util/helper.py', []],
    ['top.py', []],
    ['pkg/sub/deep/top.py', []],
  ])('a broken %s takes down %j', (broken, expected) => {
    expect(needing(layout, broken)).toEqual(expected);
  });

  it('counts the package the dots name as imported (its __init__.py runs first)', () => {
    expect(needing({ ...layout, 'pkg/__init__.py': helper }, 'pkg/__init__.py')).toEqual(expect.arrayContaining(['pkg/sub/deep/up_two.py', 'pkg/sub/up_one.py']));
    expect(needing({ ...layout, 'pkg/sub/__init__.py': helper }, 'pkg/sub/__init__.py')).toEqual(expect.arrayContaining(['pkg/sub/here.py']));
    expect(needing({ ...layout, 'pkg/sub/__init__.py': helper }, 'pkg/sub/__init__.py')).not.toContain('pkg/sub/up_one.py');
  });
});
