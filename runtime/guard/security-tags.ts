/**
 * Security tags decide risk for the approval policy: read < write < run.
 * They live with the guards that read them; tools/model.ts re-exports them
 * for tool definitions (guard/ sits below tools/).
 */
export const SECURITY_TAGS = ['read', 'write', 'run'] as const;
export type SecurityTag = (typeof SECURITY_TAGS)[number];
