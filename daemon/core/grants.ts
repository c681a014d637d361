/**
 * Temporary: daemon/owner/messages.ts (the owner protocol's wire types, moving to common/ on another branch)
 * still imports a Grant from this path, type-checked into the browser panel. The grant rules are
 * model/grant-rules.ts; this file goes when messages.ts does.
 */
export type { Grant } from './model/grant-rules.js';
