/**
 * A write refused because another writer changed its row first (contract 16: two nodes deciding one
 * command, taking the last use of one grant, or one request_id submitted to two nodes at once). Nothing of
 * the refused batch is stored. The broker reads the row as it is now and runs the refused call again
 * (fleet.ts `again`), so the loser gets the answer it would have got a moment later on one machine —
 * `AlreadyDecided`, a pending command instead of a grant's use — never a store error.
 */
export class StaleWrite extends Error {
  /** `caps`: contract 16 (v4), a PENDING cap another node's commands filled first (no row is named). */
  readonly table: 'commands' | 'grants' | 'caps';
  /** The row's id; undefined when the row is not known by id (a request_id taken by another node). */
  readonly key: string | undefined;

  constructor(table: 'commands' | 'grants' | 'caps', key: string | undefined, message: string) {
    super(message);
    this.name = 'StaleWrite';
    this.table = table;
    this.key = key;
  }
}

export function isStaleWrite(e: unknown): e is StaleWrite {
  return e instanceof StaleWrite;
}
