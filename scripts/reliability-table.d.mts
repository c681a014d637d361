/** Types of scripts/reliability-table.mjs for the tests that import it. */
export const ROOT: string;
export const DOC: string;
export const BEGIN: string;
export const END: string;
export function citations(root?: string): Map<string, Set<string>>;
export function loadRequirements(
  root?: string,
): Promise<Record<string, { source: string; statement: string }>>;
export function renderTables(
  requirements: Record<string, { statement: string }>,
  cited: Map<string, Set<string>>,
): string;
export function rewrite(doc: string, block: string): string;
export function expectedDoc(root?: string): Promise<string>;
