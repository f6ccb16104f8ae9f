/**
 * The OpenAPI adapter's runtime half, bundled only when forge.yaml lists
 * APIs. The spec itself is read by the build (stages/adapters/), which
 * records each operation's binding in agent.json; the runtime needs no parser.
 */
export { createOpenApiTool, type OpenApiContext } from './openapi-tool.ts';
