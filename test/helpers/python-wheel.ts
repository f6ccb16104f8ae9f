/**
 * A tiny local Python package as a wheel in a find-links folder, for tests
 * of declared Python dependencies (the public index is not reachable). The
 * wheel is written by Python's zipfile — a wheel is a zip with a
 * .dist-info — so no build backend needs to be installed.
 */
import { execFileSync } from 'node:child_process';
import { tempDir } from './project.ts';

const MAKE_WHEEL = `
import base64, hashlib, os, sys, zipfile
out, name, version, code, module = sys.argv[1:6]
safe = name.replace("-", "_")
dist = f"{safe}-{version}.dist-info"
files = {
    f"{module}/__init__.py": code,
    f"{dist}/METADATA": f"Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n",
    f"{dist}/WHEEL": "Wheel-Version: 1.0\\nGenerator: forge-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
    f"{dist}/top_level.txt": module + "\\n",
}
def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
record = "".join(f"{p},{digest(c.encode())},{len(c.encode())}\\n" for p, c in files.items()) + f"{dist}/RECORD,,\\n"
files[f"{dist}/RECORD"] = record
with zipfile.ZipFile(os.path.join(out, f"{safe}-{version}-py3-none-any.whl"), "w") as z:
    for p, c in files.items():
        z.writestr(p, c)
`;

/** Writes NAME-VERSION-py3-none-any.whl with `code` as MODULE/__init__.py (MODULE defaults to NAME); returns the find-links folder. */
export function localWheel(name: string, version: string, code: string, options: { module?: string; dir?: string } = {}): string {
  const dir = options.dir ?? tempDir('forge-wheels-');
  execFileSync('python3', ['-c', MAKE_WHEEL, dir, name, version, code, options.module ?? name]);
  return dir;
}

/** Environment for pip that uses only the local folder (never the public index). */
export function pipFrom(findLinks?: string): Record<string, string> {
  return { PIP_NO_INDEX: '1', PIP_DISABLE_PIP_VERSION_CHECK: '1', ...(findLinks ? { PIP_FIND_LINKS: findLinks } : {}) };
}

/**
 * A Python tool that declares the local package `forgetiny` (localWheel) in a PEP 723 block and greets
 * with it; with `output`, it declares an Output too and answers { greeting }.
 */
export function forgetinyGreetTool(options: { output?: boolean } = {}): string {
  const output = options.output ? '\nOutput:\n  greeting (str): The greeting.\n' : '';
  const value = options.output ? '{"greeting": forgetiny.greet(args["name"])}' : 'forgetiny.greet(args["name"])';
  return `# /// script
# requires-python = ">=3.8"
# dependencies = [
#   "forgetiny>=0.1",
# ]
# ///
"""
Tool: greet
Description: Greets someone with the help of a third-party package.
Tags: read

Input:
  name (str): Who to greet.
${output}"""
import forgetiny


def execute(args):
    return ${value}
`;
}
