import { MAX_TIMEOUT_MS } from '../../net/http-client.ts';
import { httpFailure } from '../../net/http-failure.ts';
import { fail, ok } from '../model.ts';
import { defineBuiltin } from './define.ts';
import { htmlToReadable } from './web/html-to-readable.ts';
import { decodeText, isTextual } from '../../net/text-content.ts';

const HTML_TYPES = ['text/html', 'application/xhtml+xml'];

export default defineBuiltin({
  spec: {
    name: 'web_fetch',
    description: [
      'Fetch a web page with GET and return its readable text: HTML is reduced to the main content (the page\'s <main>, or its only <article>, else the body) without scripts, styles, navigation, forms, headers, footers and sidebars, as Markdown (default) or plain text; preformatted text and code are kept as they are. Plain text, Markdown, JSON, XML and other text types come back as they are.',
      'Other content types (images, PDFs, archives...) are refused: use http_request for those. At most 5 MiB is downloaded (config max_response_bytes) and at most `max_chars` characters returned (default 50000); `truncated` says something was cut. Redirects are followed; `url` in the result is the page that answered.',
    ].join('\n'),
    category: 'builtin',
    tags: ['read', 'network'],
    timeoutMs: MAX_TIMEOUT_MS + 5_000,
    inputSchema: {
      type: 'object',
      required: ['url'],
      additionalProperties: false,
      properties: {
        url: { type: 'string', minLength: 1, description: 'Absolute http:// or https:// URL of the page.' },
        format: { enum: ['markdown', 'text'], default: 'markdown', description: 'How to render HTML.' },
        max_chars: { type: 'integer', minimum: 100, maximum: 1_000_000, default: 50_000, description: 'Most characters of content to return.' },
        timeout: { type: 'number', exclusiveMinimum: 0, maximum: MAX_TIMEOUT_MS / 1000, default: 30, description: 'Seconds for the whole exchange.' },
      },
    },
  },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      max_response_bytes: { type: 'integer', minimum: 1024, maximum: 64 * 1024 * 1024, default: 5 * 1024 * 1024, description: 'Pages are cut at this size before conversion.' },
    },
  },
  create(host) {
    return {
      async execute(args, ctx) {
        let response;
        try {
          response = await host.http.request({
            url: args.url,
            headers: { accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5', 'user-agent': 'forge-agent' },
            timeoutMs: Math.round(args.timeout * 1000),
            maxResponseBytes: host.config.max_response_bytes,
            signal: ctx.signal,
          });
        } catch (err) {
          return httpFailure(err, `web_fetch ${args.url}`);
        }
        if (response.status >= 400) {
          return fail('FORGE_FETCH_STATUS', `${response.url} answered ${response.status} ${response.statusText}`.trim(), response.status === 404 ? 'check the URL' : undefined);
        }
        const contentType = response.headers['content-type'] ?? '';
        const mime = contentType.split(';')[0].trim().toLowerCase();
        const isHtml = HTML_TYPES.includes(mime) || (!mime && /^\s*<(!doctype html|html)/i.test(response.body.subarray(0, 512).toString('latin1')));
        if (!isHtml && !isTextual(mime)) {
          return fail('FORGE_FETCH_CONTENT_TYPE', `${response.url} is ${mime || 'of no stated content type'}, not a web page or text`, 'web_fetch reads HTML and text; use http_request to download other content');
        }
        const text = decodeText(response.body, contentType);
        const { title, content } = isHtml ? htmlToReadable(text, args.format) : { title: undefined, content: text };
        const cut = content.length > args.max_chars;
        return ok({
          url: response.url,
          status: response.status,
          content_type: mime || 'text/html',
          ...(title ? { title } : {}),
          content: cut ? content.slice(0, args.max_chars) : content,
          truncated: cut || response.truncated,
        });
      },
    };
  },
});
