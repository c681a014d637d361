/**
 * Temporary: daemon/owner/messages.ts (the owner protocol's wire types, moving to common/ on another branch)
 * still imports the owner's View from this path, type-checked into the browser panel. The View is
 * model/owner-view.ts; this file goes when messages.ts does.
 */
export type { View } from './model/owner-view.js';
