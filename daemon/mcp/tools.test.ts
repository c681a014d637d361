/**
 * The edge knows no kind of source (architecture.md "The house"): whatever implements Source is listed,
 * dispatched to, merged into list_commands and followed when its tools change — checked with a kind the
 * edge has never heard of. (The real sources run through the daemon in test/mcp-*.test.ts.)
 */
import type { Tool } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../base/log.js';
import type { BrokerApi } from '../core/index.js';
import type { AuditEntry } from '../core/ports/store.js';
import type { Prepared, Source } from '../tool-kind/source.js';
import { createEdgeTools } from './tools.js';

const tool = (name: string): Tool => ({
  name,
  inputSchema: { type: 'object' },
  execution: { taskSupport: 'optional' },
});

/** A source of a made-up kind whose tools and answers the test sets. */
function fakeSource(name: string, prepared: Prepared) {
  const listeners = new Set<() => void>();
  let tools = [tool(`${name}__one`)];
  const calls: Array<[string, Record<string, unknown>, string]> = [];
  const source: Source = {
    kind: 'upstream',
    executor: undefined,
    tools: () => tools,
    prepare: (n, args, client) => {
      calls.push([n, args, client]);
      return prepared;
    },
    onChange: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    listing: () => ({ fields: { [name]: tools.length }, summary: `${tools.length} ${name}` }),
    listingSchema: { properties: { [name]: { type: 'integer' } }, required: [name] },
  };
  return {
    source,
    calls,
    setTools(next: Tool[]) {
      tools = next;
      for (const l of [...listeners]) l();
    },
  };
}

const call = { client: 'local', signal: new AbortController().signal };

describe('the edge over sources', () => {
  it('lists every source’s tools then its own, and calls reach the source that listed them', async () => {
    const a = fakeSource('alpha', {
      kind: 'refuse',
      code: 'InvalidArguments',
      message: 'x must be y, got z',
    });
    const audits: AuditEntry[] = [];
    const b = fakeSource('beta', {
      kind: 'answer',
      result: { status: 'DENIED', reason: 'OgfBridgeNotConfigured', detail: 'off.' },
      audit: {
        at: '2026-01-01T00:00:00.000Z',
        actor: { kind: 'client', name: 'local' },
        action: 'cue_refused',
      },
    });
    const broker = { audit: (e: AuditEntry) => audits.push(e) } as unknown as BrokerApi;
    const edge = createEdgeTools({ broker, sources: [a.source, b.source], log: silentLogger });
    expect(edge.tools.names()).toEqual([
      'alpha__one',
      'beta__one',
      'await_command_result',
      'cancel_command',
      'list_commands',
    ]);

    const refused = await edge.tools.get('alpha__one')!.call({ q: 1 }, call);
    expect(refused).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'InvalidArguments: x must be y, got z' }],
    });
    expect(a.calls).toEqual([['alpha__one', { q: 1 }, 'local']]);
    expect(b.calls).toEqual([]);

    const answered = await edge.tools.get('beta__one')!.call({}, call);
    expect(answered).toMatchObject({
      structuredContent: { status: 'DENIED', reason: 'OgfBridgeNotConfigured', detail: 'off.' },
    });
    expect(audits.map((e) => e.action)).toEqual(['cue_refused']);

    // list_commands: the sources' parts, merged in source order, with their schemas.
    const list = edge.tools.get('list_commands')!;
    expect(list.tool.outputSchema).toMatchObject({ required: ['alpha', 'beta'] });
    expect(await list.call({}, call)).toMatchObject({
      content: [{ type: 'text', text: '1 alpha; 1 beta.\n{"alpha":1,"beta":1}' }],
      structuredContent: { alpha: 1, beta: 1 },
    });
  });

  it('follows a source’s changes until closed, and tells the tool set only of real ones', () => {
    const a = fakeSource('alpha', { kind: 'refuse', code: 'InvalidArguments', message: 'no' });
    const edge = createEdgeTools({ broker: {} as BrokerApi, sources: [a.source], log: silentLogger });
    let heard = 0;
    edge.tools.onChange(() => heard++);
    a.setTools([tool('alpha__one'), tool('alpha__two')]);
    expect(heard).toBe(1);
    expect(edge.tools.get('alpha__two')).toBeDefined();
    a.setTools([tool('alpha__one'), tool('alpha__two')]);
    expect(heard).toBe(1);
    edge.close();
    a.setTools([tool('alpha__one')]);
    expect(heard).toBe(1);
    expect(edge.tools.get('alpha__two')).toBeDefined();
  });
});
