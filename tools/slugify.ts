/**
 * Tool: slugify
 * Description: Turn a page title into a URL slug: lowercase ASCII words
 *   joined by a separator, accents removed.
 * Tags: read
 *
 * Input:
 *   title (str): The page title.
 *   separator (enum(-|_), optional): Character between words. Default: -.
 *   max_length (int, default=80): Longest slug to return; cut at a word boundary.
 *
 * Output:
 *   slug (str): The slug.
 */
export function execute(args: { title: string; separator: string; max_length: number }) {
  const words = args.title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  let slug = '';
  for (const word of words) {
    const next = slug ? `${slug}${args.separator}${word}` : word;
    if (next.length > args.max_length) break;
    slug = next;
  }
  return { slug };
}
