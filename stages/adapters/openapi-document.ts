/**
 * Reads an OpenAPI 3.x or Swagger 2.0 document — a file, or a URL the build
 * fetches — and dereferences it with @apidevtools/swagger-parser, so every
 * schema an operation uses is inline. Recursive schemas keep their `$ref`
 * (see external-schema.ts). Documents on the web are fetched through
 * Forge's HTTP client: capped, with its default timeout.
 */
import { HttpClient } from '../../runtime/net/http-client.ts';

export interface OpenApiDocument {
  doc: Record<string, any>;
  /** The local files read (the document and every file it refers to), for the build cache. */
  files: string[];
}

const MAX_SPEC_BYTES = 20 * 1024 * 1024;

export async function loadOpenApiDocument(location: string, http: HttpClient = new HttpClient()): Promise<OpenApiDocument> {
  const { default: SwaggerParser } = await import('@apidevtools/swagger-parser');
  const parser = new SwaggerParser();
  const doc = (await parser.dereference(location, {
    resolve: {
      http: false,
      forgeHttp: {
        order: 200,
        canRead: /^https?:\/\//i,
        read: async (file: { url: string }) => {
          const response = await http.request({ url: file.url, headers: { accept: 'application/json, application/yaml, */*;q=0.5' }, maxResponseBytes: MAX_SPEC_BYTES });
          if (response.status >= 400) throw new Error(`${file.url} answered ${response.status} ${response.statusText}`);
          if (response.truncated) throw new Error(`${file.url} is larger than ${MAX_SPEC_BYTES / 1024 / 1024} MB`);
          return response.body;
        },
      },
    },
    dereference: { circular: 'ignore' },
  })) as Record<string, any>;
  return { doc, files: parser.$refs.paths('file') };
}
