/**
 * What every kind of tool implements (issue 20 item 1): its Kind policy, its Source (tools, validation into
 * a submit request) and shared argument lines. The kind folders (kinds/<kind>/) import this; kinds/index.ts
 * registers them.
 */
export { argLines, argumentLines, gutterLines } from './arg-lines.js';
export { bareRunSummary, type Kind, runSummary } from './kind.js';
export {
  executorsOf,
  type ImmediateAnswer,
  type ListingSchema,
  type Prepared,
  type Source,
  type SourceListing,
} from './source.js';
export type { KindModule, KindWork, SourceWorld } from './world.js';
