/**
 * An MCP server's pinned package as forge package hands it to `npm install`:
 * a name npm's registry accepts (an optional @scope/, then URL-safe
 * characters, not starting with ".", "_" or "-") at an exact semver version.
 * agent.json may come from elsewhere (--bundle), and npm reads an argument
 * such as "--registry=URL@1.0.0" as an option: every package would then
 * come from that registry.
 */
import semver from 'semver';

const NAME = /^(?:@[a-z0-9~][a-z0-9._~-]*\/)?[a-z0-9~][a-z0-9._~-]*$/i;

/** Why `name@version` is not a package npm installs as written; undefined when it is one. */
export function npmPackageProblem(name: string, version: string): string | undefined {
  if (name.length > 214 || !NAME.test(name)) return `"${name}" is not an npm package name`;
  if (semver.valid(version) !== version) return `"${version}" is not an exact version`;
  return undefined;
}
