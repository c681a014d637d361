/** Contract 15: codes live 60 s and work once; a request waits 10 minutes for the owner (fake clock). */
import { describe, expect, it } from 'vitest';
import type { ClientInfo } from './clients.js';
import { CODE_TTL_MS, ConsentBook, REQUEST_TTL_MS, REQUESTS_MAX, suggestName } from './consent.js';

const client: ClientInfo = {
  client_id: 'https://claude.ai/oauth/client.json',
  kind: 'cimd',
  host: 'claude.ai',
  redirect_uris: ['https://claude.ai/cb'],
};
const grant = {
  client,
  redirect_uri: 'https://claude.ai/cb',
  code_challenge: 'x'.repeat(43),
  resource: 'http://127.0.0.1:1/mcp',
  client_name: 'claude',
  owner: 'owner',
};

describe('[c15.tokens] ConsentBook', () => {
  it('a code works once, and not after 60 s', () => {
    let now = 0;
    const book = new ConsentBook(() => now);
    const once = book.issueCode(grant);
    expect(book.redeem(once)?.client_name).toBe('claude');
    expect(book.redeem(once)).toBeUndefined();
    const late = book.issueCode(grant);
    now += CODE_TTL_MS;
    expect(book.redeem(late)).toBeUndefined();
    now = 0;
    const fresh = book.issueCode(grant);
    now += CODE_TTL_MS - 1;
    expect(book.redeem(fresh)).toBeDefined();
  });

  it('a waiting request ends after 10 minutes', () => {
    let now = 0;
    const book = new ConsentBook(() => now);
    const p = book.hold({
      client,
      redirect_uri: 'https://claude.ai/cb',
      state: 's',
      code_challenge: 'c',
      resource: 'r',
    })!;
    now += REQUEST_TTL_MS - 1;
    expect(book.pending(p.id)).toBeDefined();
    now += 1;
    expect(book.pending(p.id)).toBeUndefined();
  });

  it('[c15.flood] at most 100 wait: the oldest unopened gives way, an opened one never', () => {
    const book = new ConsentBook(() => 0);
    const req = {
      client,
      redirect_uri: 'https://claude.ai/cb',
      state: 's',
      code_challenge: 'c',
      resource: 'r',
    };
    const opened = book.hold(req)!;
    const unopened = book.hold(req)!;
    expect(book.open(opened.id)).toBeDefined();
    expect(book.openedClients()).toEqual(new Set([client.client_id]));
    for (let i = 0; i < REQUESTS_MAX; i++) expect(book.hold(req)).toBeDefined();
    expect(book.pending(unopened.id)).toBeUndefined();
    expect(book.pending(opened.id)).toBeDefined();
    // Every waiting one opened: a newer request is refused rather than push one out.
    const all = new ConsentBook(() => 0);
    for (let i = 0; i < REQUESTS_MAX; i++) all.open(all.hold(req)!.id);
    expect(all.hold(req)).toBeUndefined();
  });

  it('suggests a name from the client_id host, else the DCR client name', () => {
    expect(suggestName(client)).toBe('claude');
    expect(suggestName({ ...client, host: 'chatgpt.com' })).toBe('chatgpt');
    expect(
      suggestName({ client_id: 'dcr_x', kind: 'dcr', client_name: 'MCP Inspector', redirect_uris: [] }),
    ).toBe('mcp-inspector');
    expect(suggestName({ client_id: 'dcr_x', kind: 'dcr', client_name: '☃', redirect_uris: [] })).toBe(
      'remote-ai',
    );
  });
});
