/**
 * Where a declared package is written, for FORGE_PYTHON_DEPS: its name as a
 * whole word, compared as pip compares names, and in a Python file only in
 * the comment block that declares packages.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { declarationSite } from '../../../stages/python/declaration-site.ts';
import { tempDir } from '../../helpers/project.ts';

function siteIn(name: string, text: string, requirement: string) {
  const root = tempDir('forge-declared-');
  writeFileSync(join(root, name), text);
  const { line, column } = declarationSite(root, name, requirement, root);
  return { line, column };
}

describe('declarationSite', () => {
  it('finds the name as a whole word, not inside a longer one ("six" is not "sixel")', () => {
    expect(siteIn('requirements.txt', 'sixel>=1\nsix==1.16\n', 'six==1.16')).toEqual({ line: 2, column: 1 });
    expect(siteIn('requirements.txt', 'python-sixer\nsix\n', 'six')).toEqual({ line: 2, column: 1 });
  });

  it('compares names as pip does: letter case, and - _ . alike', () => {
    expect(siteIn('requirements.txt', 'requests\nTyping_Extensions>=4\n', 'typing-extensions')).toEqual({ line: 2, column: 1 });
  });

  it('reads a Python file\'s comment block only: an import of the same name declares nothing', () => {
    const tool = 'import tinyfmt\n# /// script\n# dependencies = ["tinyfmt>=1.0"]\n# ///\n';
    expect(siteIn('tool.py', tool, 'tinyfmt>=1.0')).toEqual({ line: 3, column: 20 });
  });
});
