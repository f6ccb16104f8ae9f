/**
 * Tool: dev_inspect
 * Description: Show what a tool process sees: its working directory and the
 *   names of the environment variables it receives. For debugging; never
 *   shipped in a production build.
 * Category: dev
 * Tags: read
 */
export function execute() {
  return { cwd: process.cwd(), env: Object.keys(process.env).sort() };
}
