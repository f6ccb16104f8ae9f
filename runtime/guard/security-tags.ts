/**
 * Security tags decide risk for the approval policy: read < write < run.
 * They live with the guards that read them; tools/model.ts re-exports them
 * for tool definitions (guard/ sits below tools/).
 */
import { likelyTypo } from '../suggest.ts';

export const SECURITY_TAGS = ['read', 'write', 'run'] as const;
export type SecurityTag = (typeof SECURITY_TAGS)[number];

/**
 * A tag that is a security tag misspelt ("reed", "wirte", "raed", "writes"), when the tool has no security tag:
 * a typo that would make it a run tool, which a person confirms. One letter off "read" or "run" is also many a
 * word a tag may be on purpose ("ready", "head", "bread", "fun", "sun"), so a tag one edit away counts only if
 * it begins as the security tag does and is not the security tag with a letter other than "s" after it.
 */
export function misspeltSecurityTag(tags: readonly string[]): { tag: string; meant: SecurityTag } | undefined {
  if (tags.some((t) => (SECURITY_TAGS as readonly string[]).includes(t))) return undefined;
  for (const tag of tags) {
    const meant = likelyTypo(tag, SECURITY_TAGS) as SecurityTag | undefined;
    if (!meant) continue;
    const sameLetters = tag.length === meant.length && [...tag].sort().join('') === [...meant].sort().join('');
    const wordOfItsOwn = tag[0] !== meant[0] || (tag.startsWith(meant) && tag.length === meant.length + 1 && !tag.endsWith('s'));
    if (sameLetters || !wordOfItsOwn) return { tag, meant };
  }
  return undefined;
}

export function misspeltSecurityTagText(found: { tag: string; meant: SecurityTag }): { message: string; hint: string } {
  return {
    message: `tag "${found.tag}" is not a security tag, and the tool has none: it counts as a run tool, which by default a person confirms`,
    hint: `did you mean "${found.meant}"? read, write and run set a tool's risk for the approval policy; other tags are free labels, and a tool given one of the three is not warned of`,
  };
}
