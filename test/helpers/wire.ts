/**
 * Raw JSON-RPC over HTTP for the wire shapes (contract 10): a 2026-07-28 request is a POST whose params carry
 * the per-request `_meta` envelope and whose headers carry MCP-Protocol-Version / Mcp-Method / Mcp-Name; a
 * 2025-era exchange is initialize, then the Mcp-Session-Id it returns. Answers come as JSON or as an SSE
 * stream; `rpc()` returns the JSON-RPC response either way (and the notifications before it).
 */
import { request } from 'node:http';

export const MODERN = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export interface RpcAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The JSON-RPC response (undefined for a 202 or a non-JSON-RPC body). */
  response?: {
    id?: unknown;
    result?: Record<string, unknown>;
    error?: { code: number; message: string; data?: unknown };
  };
  /** Notifications that came on the SSE stream before the response. */
  notifications: Array<Record<string, unknown>>;
  body: string;
}

/** POSTs one JSON-RPC message to `url` with `headers`, and reads the answer to its end. */
export function post(url: string, message: unknown, headers: Record<string, string>): Promise<RpcAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => {
          const out: RpcAnswer = {
            status: res.statusCode ?? 0,
            headers: res.headers,
            notifications: [],
            body,
          };
          const messages: Array<Record<string, unknown>> = [];
          if (String(res.headers['content-type']).includes('text/event-stream')) {
            for (const line of body.split('\n')) {
              if (line.startsWith('data:') && line.slice(5).trim() !== '')
                messages.push(JSON.parse(line.slice(5)) as Record<string, unknown>);
            }
          } else if (body.trim() !== '') {
            try {
              messages.push(JSON.parse(body) as Record<string, unknown>);
            } catch {
              // not JSON: the caller looks at status and body
            }
          }
          for (const m of messages) {
            if ('id' in m && ('result' in m || 'error' in m)) out.response = m as RpcAnswer['response'];
            else out.notifications.push(m);
          }
          resolve(out);
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(message));
  });
}

let nextId = 1;

/** A 2026-07-28 client speaking raw JSON-RPC: every request carries the envelope and the standard headers. */
export class ModernWire {
  constructor(
    readonly url: string,
    readonly auth: Record<string, string>,
    /** The client's per-request capabilities (declare the Tasks extension to get tasks). */
    readonly capabilities: Record<string, unknown> = {},
  ) {}

  request(method: string, params: Record<string, unknown> = {}): Promise<RpcAnswer> {
    const headers: Record<string, string> = {
      ...this.auth,
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
    };
    const name = method === 'tools/call' ? params.name : params.taskId;
    if (typeof name === 'string' && (method === 'tools/call' || method.startsWith('tasks/')))
      headers['mcp-name'] = name;
    const meta = {
      ...(params._meta as Record<string, unknown> | undefined),
      'io.modelcontextprotocol/protocolVersion': MODERN,
      'io.modelcontextprotocol/clientInfo': { name: 'raw-modern', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': this.capabilities,
    };
    return post(
      this.url,
      { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: meta } },
      headers,
    );
  }
}

/** A 2025-11-25 client speaking raw JSON-RPC over one Mcp-Session-Id session. */
export class LegacyWire {
  #sid = '';

  private constructor(
    readonly url: string,
    readonly auth: Record<string, string>,
  ) {}

  static async open(url: string, auth: Record<string, string>): Promise<LegacyWire> {
    const w = new LegacyWire(url, auth);
    const init = await post(
      url,
      {
        jsonrpc: '2.0',
        id: nextId++,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'raw-legacy', version: '1' },
        },
      },
      auth,
    );
    w.#sid = String(init.headers['mcp-session-id']);
    w.initialize = init;
    await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, w.#headers());
    return w;
  }

  /** The initialize answer (its result carries the server's capabilities). */
  initialize!: RpcAnswer;

  #headers(): Record<string, string> {
    return { ...this.auth, 'mcp-session-id': this.#sid, 'mcp-protocol-version': '2025-11-25' };
  }

  request(method: string, params: Record<string, unknown> = {}): Promise<RpcAnswer> {
    return post(this.url, { jsonrpc: '2.0', id: nextId++, method, params }, this.#headers());
  }
}
