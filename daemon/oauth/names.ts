/**
 * The client name a new OAuth connection will use (contract 15, v4 for inheritance). A client name is an
 * identity on /mcp: its commands in the history (their outputs), the grants made for it. So a name in use
 * now — `local`, an MCP token client's, a live connection's — is refused; a name any other connection or
 * the history has used is never suggested (issue 35 finding 5: a stranger's DCR client calling itself
 * "acme" was offered `acme` after acme was disconnected, and read acme's outputs under acme's grant), and
 * the owner who chooses it by hand is told what it inherits and must tick that box.
 */
import { randomBytes } from 'node:crypto';
import type { Grant, OAuthConnection, StorePorts } from '../core/index.js';
import { CONNECTION_NAME_RE } from './consent.js';

/** What a used name brings to a new connection. */
export interface NameInheritance {
  commands: number;
  grants: number;
  /** "acme has 14 commands in the history and 2 live grants" — the card's box label, the refusal's text. */
  text: string;
}

/** A name free to take, refused outright, or used before (then taking it needs the owner's tick). */
export type NameCheck =
  | { kind: 'free' }
  | { kind: 'refused'; message: string }
  | { kind: 'used'; inherits: NameInheritance };

export interface ClientNamesOptions {
  store: Pick<StorePorts, 'oauth' | 'clientTokens'>;
  /** The live grants (the broker's); absent, none are counted. */
  liveGrants?: () => readonly Grant[];
}

function count(n: number, what: string): string {
  return n === 0 ? `no ${what}s` : n === 1 ? `1 ${what}` : `${n} ${what}s`;
}

/** "acme has 14 commands in the history and 2 live grants" (contract 15 v4's wording). */
export function inheritanceText(name: string, commands: number, grants: number): string {
  return `${name} has ${count(commands, 'command')} in the history and ${count(grants, 'live grant')}`;
}

export class ClientNames {
  readonly #o: ClientNamesOptions;

  constructor(o: ClientNamesOptions) {
    this.#o = o;
  }

  /** Live grants made for exactly `name` (a `*` grant is everyone's, nobody's inheritance). */
  grantsOf(name: string): Grant[] {
    return (this.#o.liveGrants?.() ?? []).filter((g) => g.client === name);
  }

  /** Whether a new connection may take `name`, and what it would inherit. */
  async check(name: string, live: readonly OAuthConnection[]): Promise<NameCheck> {
    if (!CONNECTION_NAME_RE.test(name))
      return { kind: 'refused', message: 'client_name: must match ^[a-z][a-z0-9_-]{0,31}$' };
    if (name === 'local' || (await this.#o.store.clientTokens.tokenHash(name)) !== undefined)
      return {
        kind: 'refused',
        message: `client_name: ${name} is an MCP token client's name; choose another`,
      };
    if (live.some((c) => c.client_name === name))
      return {
        kind: 'refused',
        message: `client_name: ${name} is already connected; disconnect it first or choose another`,
      };
    const use = await this.#o.store.oauth.nameUse(name);
    const grants = this.grantsOf(name).length;
    if (use.commands === 0 && use.connections === 0 && grants === 0) return { kind: 'free' };
    return {
      kind: 'used',
      inherits: { commands: use.commands, grants, text: inheritanceText(name, use.commands, grants) },
    };
  }

  /** `base` when free, else the first free `base-2`, `base-3`, … (never a used name: contract 15 v4). */
  async suggest(base: string, live: readonly OAuthConnection[]): Promise<string> {
    if ((await this.check(base, live)).kind === 'free') return base;
    for (let i = 2; i < 100; i++) {
      const n = `${base.slice(0, 28)}-${i}`;
      if ((await this.check(n, live)).kind === 'free') return n;
    }
    // Ninety-eight taken: a random suffix, still checked, rather than a used name.
    for (;;) {
      const n = `${base.slice(0, 23)}-${randomBytes(4).toString('hex')}`;
      if ((await this.check(n, live)).kind === 'free') return n;
    }
  }
}
