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

export function htmlToReadable(page: string, format: ReadableFormat): { title?: string; content: string } {
  const html = withoutDanglingMarkup(page);
  if (tooCostlyToParse(documentShape(html))) return { content: tidy(withoutTags(html)) };
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

/**
 * Past this many children of one element, or elements in all, the page is read as text too: node-html-parser
 * appends a child by copying its parent's list of children (20,000 paragraphs in a row, 180 kB: 13 s; a 4.7 MB
 * page of them: minutes), and the Markdown translation grows faster than the page as well.
 */
const MAX_CHILDREN = 2_000;
const MAX_ELEMENTS = 40_000;

interface DocumentShape {
  /** Elements left open at the end. */
  unclosed: number;
  /** The most elements one element holds directly (text between them not counted: about as many again). */
  maxChildren: number;
  elements: number;
}

function tooCostlyToParse(shape: DocumentShape): boolean {
  return shape.unclosed > MAX_UNCLOSED || shape.maxChildren > MAX_CHILDREN || shape.elements > MAX_ELEMENTS;
}

/**
 * The page without markup the parser's pattern cannot end: a "<" starting a tag after the page's last ">",
 * or a "<!--" after its last "-->", is text (escaped). The parser would read neither as markup anyway, but
 * its pattern backtracks exponentially over the whitespace after such a "<a" (22 spaces: 6 s, each 2 more
 * about 7 times that), and scans to the end of the page from each such "<!--".
 */
function withoutDanglingMarkup(html: string): string {
  let text = html;
  const lastClose = text.lastIndexOf('>');
  const tail = text.slice(lastClose + 1);
  if (/<[a-zA-Z/!]/.test(tail)) text = text.slice(0, lastClose + 1) + tail.replaceAll('<', '&lt;');
  const commentsEnd = text.lastIndexOf('-->');
  const from = commentsEnd < 0 ? 0 : commentsEnd + 3;
  if (text.includes('<!--', from)) text = text.slice(0, from) + text.slice(from).replaceAll('<!--', '&lt;!--');
  return text;
}

/** How many elements a page leaves open, holds in one element and holds in all, counted in one pass over its tags (estimates: enough to decide). */
function documentShape(html: string): DocumentShape {
  const open = new Map<string, number>();
  let unclosed = 0;
  let elements = 0;
  let maxChildren = 0;
  // The elements open around the current place, with how many children each has had.
  const stack: { tag: string; children: number }[] = [{ tag: '', children: 0 }];
  const onStack = new Map<string, number>();
  const child = () => {
    const parent = stack[stack.length - 1];
    maxChildren = Math.max(maxChildren, ++parent.children);
    elements++;
  };
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
    if (ENDLESS.has(tag) || selfClosing) {
      if (!end) child();
      continue;
    }
    const count = open.get(tag) ?? 0;
    if (!end) {
      child();
      stack.push({ tag, children: 0 });
      onStack.set(tag, (onStack.get(tag) ?? 0) + 1);
      open.set(tag, count + 1);
      unclosed++;
    } else if (count > 0) {
      // Back to where the nearest open one of its name was opened, for the children count (the elements left
      // open inside it stay counted as unclosed: the parser ends them at the end, which is what costs).
      if (onStack.get(tag)) {
        for (let top = stack.pop()!; ; top = stack.pop()!) {
          onStack.set(top.tag, onStack.get(top.tag)! - 1);
          if (top.tag === tag) break;
        }
      }
      open.set(tag, count - 1);
      unclosed--;
    }
  }
  return { unclosed, maxChildren, elements };
}

/** The page's text with every tag taken out, and the entities a page uses most put back. */
function withoutTags(html: string): string {
  const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
  return html.replace(PARSER_TAGS, ' ').replace(/&(amp|lt|gt|quot|apos|nbsp);/g, (_, name: string) => entities[name]).replace(/[ \t]+/g, ' ');
}
