/**
 * Fuzzing the MCP edge (issue 6 item 4, contract 3.2): generated hostile tool arguments — wrong types,
 * huge strings, deep nesting, lone surrogates, `__proto__`/`constructor` keys — must get a one-line
 * `InvalidArguments: <field> must be ...` naming a field that really is wrong, queue nothing, show the
 * owner nothing, and leave the daemon answering. Two layers: the product's input parser against an oracle
 * written from the contract (many cases, in process), then a smaller batch over real Streamable HTTP.
 */
import { writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../daemon/config/index.js';
import { Catalog } from '../daemon/kinds/catalog/catalog.js';
import { parseRunInput } from '../daemon/kinds/catalog/source.js';
import { parseCueInput } from '../daemon/kinds/cue/source.js';
import { parseAwaitInput, parseCancelInput, parseListInput } from '../daemon/mcp/input.js';
import { makeDataDir, type RunningDaemon, startDaemon } from './helpers/daemon.js';
import {
  CUE_FIELDS,
  FUZZ_SEED,
  hostileValue,
  mutated,
  offending,
  PENDING_FIELDS,
  RUN_FIELDS,
  strayKey,
  VALID_CUE,
  VALID_RUN,
} from './helpers/fuzz.js';
import {
  call,
  commandCount,
  echoConfig,
  GENERATIONS,
  httpClient,
  type McpClient,
  textOf,
} from './helpers/mcp.js';
import { OwnerSocket } from './helpers/owner.js';

const DIRECT_RUNS = 600;
const WIRE_RUNS = 40;

/** A refusal message names one of the fields that are really wrong, says what it accepts, in one line. */
function expectNamesField(message: string, bad: string[]): void {
  expect(message).not.toContain('\n');
  expect(message.length).toBeLessThan(600);
  const named = bad.some(
    // A `__proto__` key arrives renamed `__proto__ (a prototype key)` over HTTP (daemon/mcp/http.ts).
    (b) => message.startsWith(`${b} `) || (b === 'args' && /^args(\.| )/.test(message)),
  );
  expect(named, `${message} / wrong: ${bad.join(',')}`).toBe(true);
  expect(message).toMatch(/ (must|is not) /);
}

describe('[c3.2.bad-input] MCP tool input parser against the contract oracle', () => {
  it(`ogf_cue: accepted exactly when every field is valid (${DIRECT_RUNS} cases)`, () => {
    fc.assert(
      fc.property(mutated(VALID_CUE, CUE_FIELDS), (input) => {
        const bad = offending(input, CUE_FIELDS);
        const r = parseCueInput(input);
        expect(r.ok, JSON.stringify(bad)).toBe(bad.length === 0);
        if (!r.ok) expectNamesField(r.message, bad);
        else expect(r.value.session_id).toBe(VALID_CUE.session_id.toLowerCase());
      }),
      { numRuns: DIRECT_RUNS, seed: FUZZ_SEED },
    );
    // Nothing leaked onto Object.prototype from `__proto__` keys.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it(`run_command_wait: parser plus catalog accept exactly the valid calls (${DIRECT_RUNS} cases)`, () => {
    const catalog = new Catalog({ commands: loadConfigCommands() });
    fc.assert(
      fc.property(mutated(VALID_RUN, RUN_FIELDS), (input) => {
        const bad = offending(input, RUN_FIELDS);
        const parsed = parseRunInput(input);
        if (!parsed.ok) {
          expect(bad.length, parsed.message).toBeGreaterThan(0);
          expectNamesField(parsed.message, bad);
          return;
        }
        const prepared = catalog.prepare(parsed.value.command, parsed.value.args, 'local');
        expect(prepared.ok, JSON.stringify(bad)).toBe(bad.length === 0);
        if (!prepared.ok) {
          expectNamesField(prepared.message, bad);
          expect(prepared.code).toBe(bad.includes('command') ? 'UnknownCommand' : 'InvalidArguments');
        }
      }),
      { numRuns: DIRECT_RUNS, seed: FUZZ_SEED },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it(`await_command_result and cancel_command refuse every malformed pending_id (${DIRECT_RUNS} cases)`, () => {
    fc.assert(
      fc.property(
        mutated({ pending_id: 'c_V1StGXR8_Z5jdHi6B-myT', wait_seconds: 1 }, PENDING_FIELDS),
        (input) => {
          const bad = offending(input, PENDING_FIELDS);
          const r = parseAwaitInput(input);
          expect(r.ok).toBe(bad.length === 0);
          if (!r.ok) expectNamesField(r.message, bad);
          const { wait_seconds: _w, ...cancel } = input;
          const c = parseCancelInput(cancel);
          const cancelBad = offending(cancel, { pending_id: PENDING_FIELDS.pending_id! });
          expect(c.ok).toBe(cancelBad.length === 0);
        },
      ),
      { numRuns: DIRECT_RUNS, seed: FUZZ_SEED },
    );
  });

  it('list_commands refuses any property at all', () => {
    fc.assert(
      fc.property(strayKey, hostileValue, (key, value) => {
        const input = JSON.parse(JSON.stringify({ [key]: value ?? null })) as Record<string, unknown>;
        const r = parseListInput(input);
        expect(r.ok).toBe(Object.keys(input).length === 0);
      }),
      { numRuns: 200, seed: FUZZ_SEED },
    );
  });
});

function loadConfigCommands() {
  const dir = makeDataDir('ogf-fuzz-cfg-');
  const file = `${dir}/config.json`;
  writeFileSync(file, JSON.stringify(echoConfig()));
  return loadConfig({ dataDir: dir, config: file }, {}).commands;
}

/** The call as it travels: JSON, so `__proto__` keys arrive as own properties (http.ts keeps them visible). */
function asTransmitted(input: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(input)) as Record<string, unknown>;
}

describe.each(GENERATIONS)(
  '[c3.2.bad-input] MCP tools over real Streamable HTTP with hostile arguments (%s)',
  (generation) => {
    let d: RunningDaemon;
    let client: McpClient;
    let owner: OwnerSocket;

    beforeAll(async () => {
      d = await startDaemon({
        config: echoConfig({ ogf_bridge: { url: 'ws://127.0.0.1:9/ogf-bridge', delivery_timeout_ms: 500 } }),
      });
      client = await httpClient(d.info.mcp_url, d.mcpToken, generation);
      owner = await OwnerSocket.open(d);
    });
    afterAll(async () => {
      await client?.close();
      await owner?.close();
      await d?.stop();
    });

    it(`${WIRE_RUNS} invalid calls per tool: InvalidArguments naming the field, nothing queued, owner sees nothing`, async () => {
      const tools: Array<[string, fc.Arbitrary<Record<string, unknown>>, typeof CUE_FIELDS]> = [
        ['ogf_cue', mutated(VALID_CUE, CUE_FIELDS), CUE_FIELDS],
        ['run_command_wait', mutated(VALID_RUN, RUN_FIELDS), RUN_FIELDS],
        [
          'await_command_result',
          mutated({ pending_id: 'c_unknownid1', wait_seconds: 0 }, PENDING_FIELDS),
          PENDING_FIELDS,
        ],
      ];
      let calls = 0;
      for (const [tool, arb, fields] of tools) {
        const inputs = fc
          .sample(arb, { numRuns: WIRE_RUNS * 3, seed: FUZZ_SEED })
          .map(asTransmitted)
          .filter((i) => offending(i, fields).length > 0)
          .slice(0, WIRE_RUNS);
        for (const input of inputs) {
          const bad = offending(input, fields);
          const r = await call(client, tool, input);
          calls++;
          const text = textOf(r);
          expect(r.isError, `${tool} ${text}`).toBe(true);
          expect(r.structuredContent).toBeUndefined();
          const m = /^(InvalidArguments|UnknownCommand): (.*)$/s.exec(text);
          expect(m, text).not.toBeNull();
          expectNamesField(m![2]!, bad);
        }
      }
      expect(calls).toBeGreaterThan(WIRE_RUNS * 2);
      // Changed nothing: no command in the database, no upsert to the owner, the daemon still answers.
      expect(commandCount(d)).toBe(0);
      expect(owner.frames.filter((f) => f.type === 'upsert')).toEqual([]);
      const list = await call(client, 'list_commands', {});
      expect(list.isError).toBeFalsy();
      expect(d.child.exitCode).toBeNull();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('arguments that are not an object, unknown tools and raw garbage bodies get errors, never a crash', async () => {
      const base = new URL(d.info.mcp_url);
      const bodies: Array<string | Buffer> = [
        '{',
        '[]',
        'null',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ogf_cue","arguments":[1,2]}}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"__proto__","arguments":{}}}',
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'ogf_cue', arguments: 'x'.repeat(500_000) },
        }),
        // Invalid UTF-8 bytes, sent raw.
        Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
        Buffer.concat([
          Buffer.from(
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ogf_cue","arguments":{"message":"',
          ),
          Buffer.from([0xc0, 0xaf, 0xed, 0xa0, 0x80]),
          Buffer.from('"}}}'),
        ]),
      ];
      for (const body of bodies) {
        const res = await fetch(base, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${d.mcpToken}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: typeof body === 'string' ? body : new Uint8Array(body),
        });
        expect(res.status, String(body).slice(0, 60)).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        await res.text();
      }
      // Through the SDK session: a non-object `arguments` and an unknown tool name.
      for (const [name, args] of [
        ['ogf_cue', [1, 2]],
        ['no_such_tool', {}],
        ['constructor', {}],
      ] as const) {
        const r = await client
          .callTool({ name, arguments: args as unknown as Record<string, unknown> })
          .then((x) => ({ isError: Boolean(x.isError), text: textOf(x) }))
          .catch((e: Error) => ({ isError: true, text: e.message }));
        expect(r.isError, `${name}: ${r.text}`).toBe(true);
      }
      // A `__proto__` key is an unknown property like any other (the SDK alone would drop it silently).
      for (const [name, json] of [
        ['ogf_cue', { ...VALID_CUE }],
        ['run_command_wait', { ...VALID_RUN }],
        ['list_commands', {}],
      ] as const) {
        const text = JSON.stringify(json);
        const args = JSON.parse(`{"__proto__":{"x":1}${text === '{}' ? '}' : `,${text.slice(1)}`}`) as Record<
          string,
          unknown
        >;
        const r = await call(client, name, args);
        expect(r.isError, `${name}: ${textOf(r)}`).toBe(true);
        expect(textOf(r)).toMatch(/^InvalidArguments: __proto__ .* must be absent/);
      }
      expect(commandCount(d)).toBe(0);
      expect(owner.frames.filter((f) => f.type === 'upsert')).toEqual([]);
      expect((await call(client, 'list_commands', {})).isError).toBeFalsy();
      expect(d.child.exitCode).toBeNull();
    });

    it('[attack] a __proto__ key written with \\u escapes on the wire is refused as the spelt-out one is', async () => {
      // The AI controls the bytes: the same key, escaped, is the same key once parsed (json-body.ts).
      const escaping: typeof fetch = (input, init) =>
        fetch(input, {
          ...init,
          body:
            typeof init?.body === 'string'
              ? init.body.replaceAll('"__proto__"', '"\\u005f_proto__"')
              : init?.body,
        });
      const sly = await httpClient(d.info.mcp_url, d.mcpToken, generation, { fetch: escaping });
      try {
        const args = JSON.parse(`{"__proto__":{"x":1},${JSON.stringify(VALID_RUN).slice(1)}`) as Record<
          string,
          unknown
        >;
        const r = await call(sly, 'run_command_wait', args);
        expect(r.isError, textOf(r)).toBe(true);
        expect(textOf(r)).toMatch(/^InvalidArguments: __proto__ .* must be absent/);
        expect(commandCount(d)).toBe(0);
      } finally {
        await sly.close();
      }
    });
  },
);
