/**
 * The bytes of preview text the calls awaiting review may hold together. One preview is at most 256 KiB
 * (contract 12), but every call awaiting review is in every owner's snapshot: at the PENDING caps (2,000
 * calls, contract 1.3) that would add up to 500 MiB to a snapshot whose worst case is already ~260 MiB
 * (test/attack-flood.test.ts), past the longest string the terminal's `list` can read. So past this budget
 * a preview fails and says why; a call leaving review gives its bytes back.
 */

/** What the previews of calls awaiting review may hold together. */
export const PREVIEW_BUDGET_BYTES = 64 * 1024 * 1024;

export class PreviewBudget {
  readonly #max: number;
  readonly #held = new Map<string, number>();
  #total = 0;

  constructor(max = PREVIEW_BUDGET_BYTES) {
    this.#max = max;
  }

  /** Bytes held now. */
  get total(): number {
    return this.#total;
  }

  /** Takes `bytes` for command `id` (replacing what it held), or false when they do not fit. */
  take(id: string, bytes: number): boolean {
    const before = this.#held.get(id) ?? 0;
    if (this.#total - before + bytes > this.#max) return false;
    this.#total += bytes - before;
    this.#held.set(id, bytes);
    return true;
  }

  /** Command `id` left review: what it held is free again. */
  release(id: string): void {
    this.#total -= this.#held.get(id) ?? 0;
    this.#held.delete(id);
  }
}
