/**
 * What the daemon hands to its edges (MCP, owner WebSocket and panel): the broker, the sources, tokens,
 * config and the origins it answers for, and what an edge gives back to be mounted on the HTTP server.
 * Edges depend on these interfaces, not on how the daemon builds them (issue 20 item 4: what was
 * daemon/context.ts's edge half; the owner edge's own part is owner/context.ts's OwnerContext).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../base/index.js';
import type { Config } from '../config/index.js';
import type { BrokerApi, Command } from '../core/index.js';
import type { DataDir } from '../datadir/index.js';
import type { Tokens } from '../tokens/index.js';
import type { Source } from '../tool-kind/index.js';

/** Handles a request when it is the route's; returns false to let the next route try. */
export type HttpRoute = (req: IncomingMessage, res: ServerResponse, url: URL) => boolean | Promise<boolean>;
export type UpgradeRoute = (req: IncomingMessage, socket: Duplex, head: Buffer, url: URL) => boolean;

export interface Origins {
  /** The daemon's own base URL (`http://HOST:PORT`). */
  url(): string;
  /** Host header check (DNS rebinding): loopback names on our port, and public_url's host. */
  isAllowedHost(host: string | undefined): boolean;
  /** Browser Origin check: the daemon's own origins and public_url. */
  isAllowedOrigin(origin: string): boolean;
}

/**
 * Who an OAuth access token acts as on /mcp (contract 15), and the 401 challenge that points a client to
 * the protected resource metadata. Present only when OAuth is on.
 */
export interface BearerAuthority {
  clientFor(token: string): Promise<string | undefined>;
  challenge(tokenGiven: boolean): string;
}

export interface EdgeContext {
  config: Config;
  paths: DataDir;
  broker: BrokerApi;
  /** What an AI may ask for (the catalog, cues, every upstream's tools), in the order the MCP edge lists it. */
  sources: readonly Source[];
  tokens: Tokens;
  origins: Origins;
  log: Logger;
  version: string;
  /** Contract 15: OAuth access tokens on /mcp (absent when OAuth is off). */
  oauthBearer?: BearerAuthority;
  /**
   * Contract 19: where the owner decides on `command` (the card's URL, `<base>/#<id>`, no token in it) and
   * one sentence saying what waits — what a URL-mode elicitation hands the AI's client.
   */
  ownerCard?: (command: Command) => { url: string; message: string };
}

/** An edge the daemon mounts on its HTTP server. */
export interface Edge {
  routes: HttpRoute[];
  upgrades: UpgradeRoute[];
  close(): Promise<void>;
}
