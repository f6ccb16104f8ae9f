/**
 * A web page reduced to what a reader wants: the main content (a page's
 * <main>, or its only <article>, else its <body>) without scripts, styles,
 * navigation, forms and page chrome, as Markdown (node-html-markdown) or as
 * plain text. Preformatted text and code are kept exactly.
 */
import { NodeHtmlMarkdown } from 'node-html-markdown';
import { HTMLElement, NodeType, parse, type Node } from 'node-html-parser';

export type ReadableFormat = 'markdown' | 'text';

/** Never content. */
const ALWAYS_DROPPED = ['script', 'style', 'noscript', 'template', 'nav', 'form', 'iframe', 'svg', 'canvas', 'button', 'select', 'dialog', 'object', 'embed'];
/** Page chrome: dropped when the whole body is used (inside <main> or <article> they are usually the content's own). */
const CHROME = ['header', 'footer', 'aside'];

const BLOCKS = new Set(['address', 'article', 'blockquote', 'dd', 'div', 'dl', 'dt', 'figcaption', 'figure', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'li', 'main', 'ol', 'p', 'section', 'table', 'tr', 'ul', 'header', 'footer', 'aside', 'details', 'summary']);

/** Elements whose content the parser reads as text, and the element count skips. */
const RAW_TEXT = new Set(['script', 'style', 'noscript']);

let markdown: NodeHtmlMarkdown | undefined;

/**
 * Past this many elements left open, the page is read as text with its tags taken out instead of parsed:
 * node-html-parser's time grows as the cube of the elements it must close at the end (2,000 unclosed
 * <div>s: 2 s; 6,000: minutes), all on the server's thread. 500 cost it about 30 ms.
 */
const MAX_UNCLOSED = 500;

export function htmlToReadable(html: string, format: ReadableFormat): { title?: string; content: string } {
  if (unclosedElements(html) > MAX_UNCLOSED) return { content: tidy(withoutTags(html)) };
  const document = parse(html, { comment: false, blockTextElements: Object.fromEntries([...RAW_TEXT].map((tag) => [tag, true])) });
  const title = (document.querySelector('title')?.text ?? document.querySelector('meta[property="og:title"]')?.getAttribute('content'))?.trim() || undefined;
  const articles = document.querySelectorAll('article');
  const main = document.querySelector('main') ?? (articles.length === 1 ? articles[0] : undefined);
  const root = main ?? document.querySelector('body') ?? document;
  const dropped = main ? ALWAYS_DROPPED : [...ALWAYS_DROPPED, ...CHROME];
  for (const element of root.querySelectorAll([...dropped, '[role="navigation"]', '[aria-hidden="true"]', '[hidden]'].join(','))) element.remove();

  if (format === 'markdown') {
    collapseWhitespace(root);
    markdown ??= new NodeHtmlMarkdown({ maxConsecutiveNewlines: 2 });
    return { title, content: markdown.translate(root.toString()).trim() };
  }
  // Preformatted blocks are set aside while whitespace is tidied, then put back as they were.
  const preformatted: string[] = [];
  const text = tidy(textOf(root, preformatted));
  return { title, content: text.replace(/\u0000(\d+)\u0000/g, (_, i: string) => preformatted[Number(i)]) };
}

/**
 * Line breaks in running text are spaces to a browser; node-html-markdown
 * drops them after an inline element ("<b>x</b>\ny" → "**x**y"), so they are
 * made plain spaces first. Preformatted text is left alone.
 */
function collapseWhitespace(node: Node): void {
  if (node.nodeType === NodeType.TEXT_NODE) {
    node.rawText = node.rawText.replace(/\s+/g, ' ');
    return;
  }
  if (node instanceof HTMLElement && ['pre', 'textarea'].includes(node.rawTagName?.toLowerCase())) {
    // The newline before </code></pre> would become a blank line before the closing fence.
    let last: Node | undefined = node;
    while (last && last.nodeType !== NodeType.TEXT_NODE) last = last.childNodes.at(-1);
    if (last) last.rawText = last.rawText.replace(/\n$/, '');
    return;
  }
  for (const child of node.childNodes) collapseWhitespace(child);
}

function textOf(node: Node, preformatted: string[]): string {
  if (node.nodeType === NodeType.TEXT_NODE) return node.text.replace(/\s+/g, ' ');
  if (!(node instanceof HTMLElement)) return '';
  const tag = node.rawTagName?.toLowerCase() ?? '';
  if (tag === 'pre') {
    preformatted.push(node.text.replace(/\n$/, ''));
    return `\n\n\u0000${preformatted.length - 1}\u0000\n\n`;
  }
  if (tag === 'br') return '\n';
  const inner = node.childNodes.map((child) => textOf(child, preformatted)).join('');
  if (tag === 'li') return `\n- ${inner.trim()}`;
  if (tag === 'tr') return `\n${inner.replace(/\t$/, '')}`;
  if (tag === 'td' || tag === 'th') return `${inner.trim()}\t`;
  if (/^h[1-6]$/.test(tag)) return `\n\n${inner.trim()}\n\n`;
  return BLOCKS.has(tag) ? `\n${inner}\n` : inner;
}

/** Trims lines and keeps at most one blank line between paragraphs. */
function tidy(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/[ \t]+$/, '').replace(/^ +/, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Elements never needing an end tag, and those the parser ends by itself (cheaply) when the next one starts. */
const ENDLESS = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr', 'p', 'li', 'dt', 'dd', 'option', 'optgroup', 'tr', 'td', 'th', 'thead', 'tbody', 'tfoot', 'colgroup', 'rp', 'rt']);

/** node-html-parser's own pattern for a comment or a tag (dist/nodes/html.js, kMarkupPattern); <!doctype> and <![CDATA[ are text to it. */
const PARSER_TAGS = /<!--[\s\S]*?-->|<(\/?)([a-zA-Z][-.:0-9_a-zA-Z]*)((?:\s+[^>]*?(?:(?:'[^']*')|(?:"[^"]*"))?)*)\s*(\/?)>/g;

/** How many elements a page leaves open, counted in one pass over its tags (an estimate: enough to decide). */
function unclosedElements(html: string): number {
  const open = new Map<string, number>();
  let unclosed = 0;
  // Inside the elements the parser reads as text (RAW_TEXT) a "<div>" is text, a template in a script: only their end tag counts.
  let rawText: string | undefined;
  // Tags found as node-html-parser finds them (its kMarkupPattern): a quoted attribute may hold "<" or ">", and a
  // count that read `<div title="<">` as no tag let 3,000 such (48 kB) through to the cubic close, 14 s on the thread.
  for (const [, end, name, , selfClosing] of html.matchAll(PARSER_TAGS)) {
    if (name === undefined) continue; // a comment
    const tag = name.toLowerCase();
    if (rawText) {
      if (end && tag === rawText) rawText = undefined;
      continue;
    }
    if (!end && !selfClosing && RAW_TEXT.has(tag)) {
      rawText = tag;
      continue;
    }
    if (ENDLESS.has(tag) || selfClosing) continue;
    const count = open.get(tag) ?? 0;
    if (!end) {
      open.set(tag, count + 1);
      unclosed++;
    } else if (count > 0) {
      open.set(tag, count - 1);
      unclosed--;
    }
  }
  return unclosed;
}

/** The page's text with every tag taken out, and the entities a page uses most put back. */
function withoutTags(html: string): string {
  const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
  return html.replace(PARSER_TAGS, ' ').replace(/&(amp|lt|gt|quot|apos|nbsp);/g, (_, name: string) => entities[name]).replace(/[ \t]+/g, ' ');
}
