/**
 * An MCP client the way an attacker writes one: raw `fetch` over Streamable HTTP, no SDK, so it can send
 * what the SDK never would — JSON-RPC arrays of up to 100 `tools/call`s in one POST (the server
 * transport's own limit), many POSTs at once, strings full of lone surrogates.
 */
import { request } from 'node:http';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { RunningDaemon } from './daemon.js';

/** One JSON-RPC response of a batch. */
export interface RpcResponse {
  id: number;
  result?: CallToolResult;
  error?: { code: number; message: string };
}

/** The pending_id a `run_command_wait` response queued, if it queued one. */
export function queuedId(r: RpcResponse): string | undefined {
  return (r.result?.structuredContent as { pending_id?: string } | undefined)?.pending_id;
}

/** The text of a tool-level refusal (`isError` result), if the response is one. */
export function refusalText(r: RpcResponse): string | undefined {
  const first = r.result?.isError === true ? r.result.content[0] : undefined;
  return first?.type === 'text' ? first.text : undefined;
}

/** Every JSON-RPC message in a response body: SSE `data:` lines, or plain JSON. */
function parseBody(contentType: string, text: string): RpcResponse[] {
  if (contentType.includes('text/event-stream')) {
    return text
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as RpcResponse);
  }
  const body = JSON.parse(text) as RpcResponse | RpcResponse[];
  return Array.isArray(body) ? body : [body];
}

export class RawMcp {
  readonly #url: string;
  readonly #headers: Record<string, string>;
  #nextId = 1;

  private constructor(url: string, headers: Record<string, string>) {
    this.#url = url;
    this.#headers = headers;
  }

  /** initialize + notifications/initialized with `token`; the session id rides on every later POST. */
  static async open(d: RunningDaemon, token: string): Promise<RawMcp> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const init = await fetch(d.info.mcp_url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: LATEST_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: 'flood', version: '1.0.0' },
        },
      }),
    });
    await init.text();
    const sid = init.headers.get('mcp-session-id');
    if (init.status !== 200 || sid === null) throw new Error(`initialize answered HTTP ${init.status}`);
    const session = new RawMcp(d.info.mcp_url, {
      ...headers,
      'mcp-session-id': sid,
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
    });
    const ack = await session.#post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    await ack.text();
    return session;
  }

  #post(body: string): Promise<Response> {
    return fetch(this.#url, { method: 'POST', headers: this.#headers, body });
  }

  /** One POST holding a JSON-RPC array of `run_command_wait` calls; resolves to their responses by call order. */
  async batch(calls: ReadonlyArray<Record<string, unknown>>): Promise<RpcResponse[]> {
    const ids = calls.map(() => this.#nextId++);
    const body = JSON.stringify(
      calls.map((args, i) => ({
        jsonrpc: '2.0',
        id: ids[i],
        method: 'tools/call',
        params: { name: 'run_command_wait', arguments: args },
      })),
    );
    const res = await this.#post(body);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`batch answered HTTP ${res.status}: ${text.slice(0, 200)}`);
    const byId = new Map(parseBody(res.headers.get('content-type') ?? '', text).map((r) => [r.id, r]));
    return ids.map((id) => {
      const r = byId.get(id);
      if (r === undefined) throw new Error(`no response to call ${id}`);
      return r;
    });
  }
}

/** A 2025-06-18 `initialize` request body, as a raw client sends it. */
export function initializeBody(clientName: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: clientName, version: '1' },
    },
  });
}

export interface RawPostAnswer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

/**
 * One raw POST to `url` (the daemon's `/mcp`) with a bearer token, on its own connection (no agent, so
 * every call holds a connection of its own, as an attacker's would); resolves the status and whole body.
 */
export function postMcp(
  url: string,
  token: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<RawPostAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
