/**
 * How many HTTP connections the daemon holds, and which one gives way when it is full. The AI is the
 * adversary and every peer is 127.0.0.1 (the daemon listens on loopback only), so a per-address cap would
 * cap the owner together with the AI. Connections are told apart by what they are doing instead:
 *
 * ```
 *  accepted, idle, or still sending its request ──▶ evictable: at the cap, the oldest of these is dropped
 *                                                   to admit the new connection (a slow-loris cannot
 *                                                   hold the door shut, and each lives ≤ 30 s anyway)
 *  request received, being answered             ──▶ kept (a tool call may wait 90 s on its response)
 *  upgraded (the owner WebSocket)               ──▶ kept
 * ```
 *
 * Requests under `/mcp` (contract 3: the AI's endpoint) may occupy at most `aiMax` connections; past that
 * they are answered 503 at once, so the rest (`max - aiMax`) always stays for the owner's panel, login and
 * socket (contract 5: nothing the AI sends may lock the owner out). Login attempts are the one thing in
 * that rest an attacker can hold without a credential (each waits its turn in the login gate, kept like any
 * request being answered), so the gate lets at most `loginMax` — half of the rest — be checked or wait at
 * once (owner/throttle.ts answers the others "busy"): the owner's panel, page and session probe always have
 * the other half. `max` itself stays below the
 * descriptor limit with a reserve, so connections alone cannot starve a launch of descriptors (contract 4).
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../base/index.js';

/** Well above legitimate use: the soak test's 200 MCP clients hold about two connections each. */
export const DEFAULT_MAX_CONNECTIONS = 2048;
const MAX_CONNECTIONS_ENV = 'OGF_BROKER_MAX_CONNECTIONS';
const SHED_LOG_EVERY_MS = 10_000;

export interface ConnectionLimits {
  /** Connections held at once. */
  max: number;
  /** Of those, how many requests under `/mcp` may occupy. */
  aiMax: number;
  /** Of the rest, how many login attempts (POST /login, owner Bearer upgrades) may be checked or wait at once. */
  loginMax: number;
}

/** The soft RLIMIT_NOFILE of this process (Linux /proc), or undefined where it cannot be read. */
export function descriptorLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (m === null || m[1] === 'unlimited') return undefined;
    return Number(m[1]);
  } catch {
    return undefined;
  }
}

/**
 * The limits for a descriptor limit (undefined: unknown) and `OGF_BROKER_MAX_CONNECTIONS`. Pure.
 * Descriptors kept for everything that is not a connection (the database, logs, launches: two pipes per
 * running child) are a quarter of the limit, from 64 to 512. The variable (16..65536) is a tuning knob for
 * a host that knows its limits better, and lets a test put the cap above the descriptor limit.
 */
export function connectionLimits(
  fdLimit: number | undefined,
  env: NodeJS.ProcessEnv,
  warn: (reason: string) => void = () => {},
): ConnectionLimits {
  let max = DEFAULT_MAX_CONNECTIONS;
  if (fdLimit !== undefined) {
    const reserve = Math.min(512, Math.max(64, Math.floor(fdLimit / 4)));
    max = Math.max(16, Math.min(max, fdLimit - reserve));
  }
  const raw = env[MAX_CONNECTIONS_ENV];
  if (raw !== undefined && raw !== '') {
    const n = Number(raw);
    if (Number.isInteger(n) && n >= 16 && n <= 65_536) max = n;
    else warn(`${MAX_CONNECTIONS_ENV} must be an integer from 16 to 65536`);
  }
  const ownerRoom = Math.max(8, Math.floor(max / 8));
  return { max, aiMax: max - ownerRoom, loginMax: Math.floor(ownerRoom / 2) };
}

/** True for the AI's endpoint: `/mcp` and the capability URL `/mcp/<token>` (contract 3). */
export function isAiPath(pathname: string): boolean {
  return pathname === '/mcp' || pathname.startsWith('/mcp/');
}

interface Connection {
  /** When it was accepted or last finished a response: the oldest evictable one goes first. */
  since: number;
  /** Responses not yet finished (more than one only when the client pipelines). */
  active: number;
  /** Of those, requests under /mcp. */
  ai: number;
  /** The newest request on it. */
  req: IncomingMessage | undefined;
  upgraded: boolean;
}

export class ConnectionGate {
  readonly #limits: ConnectionLimits;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #open = new Map<Socket, Connection>();
  #aiActive = 0;
  #shed = { evicted: 0, refused: 0, ai: 0 };
  #lastShedLog = Number.NEGATIVE_INFINITY;

  constructor(limits: ConnectionLimits, log: Logger, now: () => number = Date.now) {
    this.#limits = limits;
    this.#log = log;
    this.#now = now;
  }

  get limits(): ConnectionLimits {
    return this.#limits;
  }

  /** Counts the server's connections from now on; call once, before it listens. */
  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.#admit(socket));
  }

  /**
   * Records a request (before it is routed) and says whether it may proceed: false for a request under
   * /mcp past the AI's share, which the caller answers 503.
   */
  request(req: IncomingMessage, res: ServerResponse, ai: boolean): boolean {
    const c = this.#open.get(req.socket);
    if (c === undefined) return true;
    if (ai && this.#aiActive >= this.#limits.aiMax) {
      this.#shed.ai++;
      this.#report();
      return false;
    }
    c.active++;
    c.req = req;
    if (ai) {
      c.ai++;
      this.#aiActive++;
    }
    // 'close' comes once per response, whether it finished or its connection went away first.
    res.once('close', () => {
      c.active--;
      if (ai) {
        c.ai--;
        this.#aiActive--;
      }
      c.since = this.#now();
    });
    return true;
  }

  /** Marks a connection handed over to a WebSocket: it is never evicted. */
  upgraded(socket: Socket): void {
    const c = this.#open.get(socket);
    if (c !== undefined) c.upgraded = true;
  }

  #admit(socket: Socket): void {
    if (this.#open.size >= this.#limits.max) {
      const victim = this.#evictable();
      if (victim === undefined) {
        this.#shed.refused++;
        this.#report();
        socket.destroy();
        return;
      }
      this.#shed.evicted++;
      this.#report();
      this.#forget(victim);
      victim.destroy();
    }
    this.#open.set(socket, { since: this.#now(), active: 0, ai: 0, req: undefined, upgraded: false });
    socket.once('close', () => this.#forget(socket));
  }

  #forget(socket: Socket): void {
    this.#open.delete(socket);
  }

  /** The oldest connection that is idle or still sending its request, if any. */
  #evictable(): Socket | undefined {
    let oldest: Socket | undefined;
    let since = Number.POSITIVE_INFINITY;
    for (const [socket, c] of this.#open) {
      if (c.upgraded) continue;
      const answering = c.active > 0 && c.req?.complete === true;
      if (!answering && c.since < since) {
        oldest = socket;
        since = c.since;
      }
    }
    return oldest;
  }

  /** One log line per 10 s at most while shedding, so an attack cannot flood the log. */
  #report(): void {
    const now = this.#now();
    if (now - this.#lastShedLog < SHED_LOG_EVERY_MS) return;
    this.#lastShedLog = now;
    this.#log.log('warn', 'http_connections_shed', {
      ...this.#shed,
      open: this.#open.size,
      max: this.#limits.max,
      ai_max: this.#limits.aiMax,
    });
    this.#shed = { evicted: 0, refused: 0, ai: 0 };
  }
}
