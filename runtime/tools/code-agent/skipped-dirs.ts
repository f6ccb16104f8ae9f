/**
 * Directories the search and tree tools leave out by default: version
 * control, dependencies, virtual environments and build output. They are
 * large, generated, and rarely what a question about the code is about.
 */
export const SKIPPED_DIRS: readonly string[] = ['.git', 'node_modules', 'vendor', '__pycache__', '.venv', 'dist', 'build'];

/** fast-glob / ripgrep ignore globs for SKIPPED_DIRS at any depth. */
export const SKIPPED_DIR_GLOBS: readonly string[] = SKIPPED_DIRS.map((d) => `**/${d}/**`);
