/** Bounds on what an upstream may send (architecture.md rule 5: validate at every edge). */

/** An upstream listing more tools than this is refused (a flood must not reach the AI or the owner). */
export const MAX_TOOLS = 512;
/** One upstream message larger than this ends its connection (results are kept up to 4 MiB, contract 7). */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
/**
 * One tool definition (name, schema, title, annotations, description) larger than this as JSON is not exposed:
 * its annotations travel in every owner View of every call, so a server must not inflate them (contract 5 (v2):
 * frames stay bounded).
 */
export const MAX_TOOL_JSON_CHARS = 64 * 1024;
