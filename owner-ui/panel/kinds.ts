/**
 * How the panel shows each kind of tool (issue 20 item 1): one line per kind, mapping its tool to the
 * parts of its card. The card (card.ts) and the Allow… dialog (allow.ts) ask this instead of switching on
 * the kind. Its tool and View fields are the owner protocol's (common/kinds.ts); the daemon's side of a kind
 * is its folder, daemon/kinds/<kind>/, which the panel never imports.
 */
import type { View } from '../../common/owner-messages.js';
import { cueBlock, sessionLine } from './cue.js';
import { upstreamBlock, upstreamContent } from './upstream.js';

/** The parts of a card a kind adds; every part is optional. */
export interface KindCard {
  /** Under the argv, before the AI's justification (a cue's session). */
  lead?(v: View): HTMLElement | null;
  /** After the justification: the kind's own picture of what runs. */
  block?(v: View): HTMLElement | null;
  /** In the outcome, before stdout/stderr (an upstream's own content blocks). */
  outcome?(v: View): HTMLElement | null;
  /**
   * Present when the daemon may grant its commands (contract 8): what "any arguments" means, in words;
   * `keys` lists the request's argument names in words, undefined when it has none.
   */
  anyWords?(v: View, keys: string | undefined): string;
}

const catalogCard: KindCard = {
  anyWords: (v, keys) =>
    keys === undefined
      ? `any arguments the catalog accepts for ${v.command} (this request has none)`
      : `${keys} for ${v.command}, whatever the AI chooses within the catalog's rules`,
};

const cueCard: KindCard = { lead: sessionLine, block: cueBlock };

const upstreamCard: KindCard = {
  block: upstreamBlock,
  outcome: upstreamContent,
  anyWords(v, keys) {
    // An upstream call's View always names its server and tool; the catalog's words if a row lacks them.
    if (v.upstream === undefined) return catalogCard.anyWords!(v, keys);
    const what = `${v.upstream.tool} on ${v.upstream.name}`;
    return keys === undefined
      ? `any arguments at all for ${what}, whatever the AI sends`
      : `${keys} for ${what} — any arguments at all, whatever the AI sends`;
  },
};

const CARDS = new Map<string, KindCard>([
  ['run_command_wait', catalogCard],
  ['ogf_cue', cueCard],
  ['upstream', upstreamCard],
]);

/** The card parts of a View's kind; undefined for a tool this panel does not know (nothing extra shown). */
export function kindCard(tool: string): KindCard | undefined {
  return CARDS.get(tool);
}
