/** Types of scripts/reliability-table.mjs for the tests that import it. */
export const ROOT: string;
export const DOC: string;
export const BEGIN: string;
export const END: string;
export const SECTIONS: ReadonlyArray<readonly [string, string]>;
export const ID_RE: RegExp;
export function sectionOf(id: string): string | undefined;
export const OLD_TOKEN_RE: RegExp;
export function citations(root?: string, tokens?: RegExp): Map<string, Set<string>>;
export function loadRequirements(
  root?: string,
): Promise<Record<string, { source: string; statement: string }>>;
export function renderTables(
  requirements: Record<string, { statement: string }>,
  cited: Map<string, Set<string>>,
): string;
export function rewrite(doc: string, block: string): string;
export function expectedDoc(root?: string): Promise<string>;
