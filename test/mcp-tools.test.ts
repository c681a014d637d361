/**
 * The five MCP tools over real Streamable HTTP (contracts.md 3): tools/list, every ogf_cue refusal of 3.3 with
 * a positive control at each boundary, the other tools' refusals, request_id reuse both ways, the twin rule,
 * client isolation, PENDING → SUCCEEDED with a real owner approval, a wait that ends PENDING, and progress.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDaemon, startDaemon } from './helpers/daemon.js';
import {
  call,
  commandCount,
  echoConfig,
  GENERATIONS,
  httpClient,
  type McpClient,
  makeClientToken,
  structured,
  TestOwner,
  textOf,
} from './helpers/mcp.js';

const UUID = 'a1b2c3d4-e5f6-4789-8abc-def012345678';
const CUE = {
  session_id: UUID,
  action: 'wave',
  emotion: 'happy',
  intensity: 0.5,
  gaze: 'user',
  wait_seconds: 0,
};

describe.each(GENERATIONS)('over the %s generation', (generation) => {
  let d: RunningDaemon;
  let mcp: McpClient;
  let owner: TestOwner;

  beforeAll(async () => {
    // A bridge URL nobody listens on: cues queue normally and are never approved here, so nothing is sent.
    d = await startDaemon({ config: echoConfig({ ogf_bridge: { url: 'ws://127.0.0.1:9/ogf-bridge' } }) });
    mcp = await httpClient(d.info.mcp_url, d.mcpToken, generation);
    owner = await TestOwner.connect(d);
  });

  afterAll(async () => {
    owner?.close();
    await mcp?.close();
    await d?.stop();
  });

  /** A cue that differs from every other one in the suite (the twin rule would merge identical ones). */
  let cueSeq = 0;
  function cue(over: Record<string, unknown>): Record<string, unknown> {
    cueSeq++;
    return { ...CUE, ttl_ms: 1000 + cueSeq, ...over };
  }

  describe('tools/list', () => {
    it('publishes the five tools with JSON input schemas, output schemas and honest annotations', async () => {
      const { tools } = await mcp.listTools();
      const byName = new Map(tools.map((t) => [t.name, t]));
      expect([...byName.keys()].sort()).toEqual(
        ['await_command_result', 'cancel_command', 'list_commands', 'ogf_cue', 'run_command_wait'].sort(),
      );
      const cueTool = byName.get('ogf_cue')!;
      expect(cueTool.inputSchema.required?.sort()).toEqual([
        'action',
        'emotion',
        'gaze',
        'intensity',
        'session_id',
      ]);
      expect(Object.keys(cueTool.inputSchema.properties ?? {}).sort()).toEqual(
        ['action', 'emotion', 'gaze', 'intensity', 'message', 'session_id', 'ttl_ms', 'wait_seconds'].sort(),
      );
      expect((cueTool.inputSchema as Record<string, unknown>).additionalProperties).toBe(false);
      const props = cueTool.inputSchema.properties as Record<string, Record<string, unknown>>;
      expect(props.action!.enum).toEqual([
        'none',
        'wave',
        'nod',
        'shake_head',
        'small_guts_pose',
        'celebrate',
      ]);
      expect(props.gaze!.enum).toEqual(['neutral', 'user', 'content', 'away']);
      expect([props.ttl_ms!.minimum, props.ttl_ms!.maximum, props.ttl_ms!.default]).toEqual([
        100, 10000, 3000,
      ]);
      for (const t of tools) {
        expect(t.outputSchema?.type, t.name).toBe('object');
        expect(t.description, t.name).toBeTruthy();
      }
      expect(byName.get('run_command_wait')!.annotations).toMatchObject({
        destructiveHint: true,
        openWorldHint: true,
      });
      expect(byName.get('await_command_result')!.annotations).toMatchObject({ readOnlyHint: true });
      expect(byName.get('list_commands')!.annotations).toMatchObject({ readOnlyHint: true });
      // The feature-off cue result has no pending_id, so the result schema must not require it.
      expect(cueTool.outputSchema?.required ?? []).not.toContain('pending_id');
    });

    it('list_commands shows the catalog only, with JSON Schema params, and the bridge flag', async () => {
      const r = await call(mcp, 'list_commands', {});
      expect(r.isError).toBeFalsy();
      const s = structured(r);
      expect(s.ogf_bridge_configured).toBe(true);
      const commands = s.commands as Array<Record<string, unknown>>;
      expect(commands.map((c) => c.name)).toEqual(['echo']);
      expect(commands[0]).toMatchObject({ description: 'Print a word', timeout_s: 30 });
      expect((commands[0]!.params_schema as Record<string, unknown>).type).toBe('object');
      expect(textOf(r).split('\n')[1]).toBe(JSON.stringify(s));
    });
  });

  describe('[c3.2.bad-input] ogf_cue refusals (contract 3.3): InvalidArguments naming the field, nothing queued', () => {
    const refusals: Array<[string, Record<string, unknown>, string]> = [
      ['session_id not a UUID', { session_id: 'not-a-uuid' }, 'session_id'],
      ['session_id a number', { session_id: 42 }, 'session_id'],
      ['session_id missing', { session_id: undefined }, 'session_id'],
      ['action off the list', { action: 'dance' }, 'action'],
      ['emotion off the list', { emotion: 'angry' }, 'emotion'],
      ['gaze off the list', { gaze: 'left' }, 'gaze'],
      ['intensity a boolean', { intensity: true }, 'intensity'],
      ['intensity a string', { intensity: '0.5' }, 'intensity'],
      ['intensity null (what NaN becomes in JSON)', { intensity: null }, 'intensity'],
      ['intensity below 0', { intensity: -0.01 }, 'intensity'],
      ['intensity above 1', { intensity: 1.01 }, 'intensity'],
      ['ttl_ms 99', { ttl_ms: 99 }, 'ttl_ms'],
      ['ttl_ms 10001', { ttl_ms: 10001 }, 'ttl_ms'],
      ['ttl_ms not an integer', { ttl_ms: 500.5 }, 'ttl_ms'],
      ['ttl_ms a string', { ttl_ms: '3000' }, 'ttl_ms'],
      ['message of 121 letters', { message: 'a'.repeat(121) }, 'message'],
      ['message with a C0 control', { message: 'hi\u0007' }, 'message'],
      ['message with a newline', { message: 'a\nb' }, 'message'],
      ['message with DEL', { message: 'hi\u007f' }, 'message'],
      ['message with a C1 control', { message: 'hi\u0085' }, 'message'],
      ['message a number', { message: 5 }, 'message'],
      ['wait_seconds below 0', { wait_seconds: -1 }, 'wait_seconds'],
      ['wait_seconds above 90', { wait_seconds: 90.5 }, 'wait_seconds'],
      ['wait_seconds a string', { wait_seconds: '5' }, 'wait_seconds'],
      ['an unknown property', { target: 'screen' }, 'target'],
    ];

    for (const [what, over, field] of refusals) {
      it(`refuses ${what}`, async () => {
        const before = commandCount(d);
        const args = cue(over);
        for (const [k, v] of Object.entries(args)) if (v === undefined) delete args[k];
        const r = await call(mcp, 'ogf_cue', args);
        expect(r.isError).toBe(true);
        expect(textOf(r)).toMatch(new RegExp(`^InvalidArguments: ${field} must be .+, got .+`));
        expect(textOf(r)).not.toContain(UUID);
        expect(r.structuredContent).toBeUndefined();
        expect(commandCount(d)).toBe(before);
      });
    }

    const accepted: Array<[string, Record<string, unknown>]> = [
      ['intensity 0', { intensity: 0 }],
      ['intensity 1', { intensity: 1 }],
      ['ttl_ms 100', { ttl_ms: 100 }],
      ['ttl_ms 10000', { ttl_ms: 10000 }],
      ['a message of 120 emoji (code points, not UTF-16 units)', { message: '😀'.repeat(120) }],
      ['a message of 120 letters', { message: 'b'.repeat(120) }],
      ['message null (clears)', { message: null }],
      ['an upper-case UUID', { session_id: UUID.toUpperCase(), action: 'nod' }],
      ['wait_seconds 0 (answers at once)', { wait_seconds: 0 }],
    ];
    for (const [what, over] of accepted) {
      it(`accepts ${what} and queues exactly one command`, async () => {
        const before = commandCount(d);
        const r = await call(mcp, 'ogf_cue', cue(over));
        expect(r.isError, textOf(r)).toBeFalsy();
        const s = structured(r);
        expect(s).toMatchObject({ status: 'PENDING', phase: 'awaiting_review', command: 'ogf.cue' });
        expect(s.display).toEqual([
          'ogf-bridge-client',
          'deliver',
          '--session-file',
          expect.stringMatching(/cue-/),
        ]);
        expect(textOf(r)).toMatch(/^PENDING c_/);
        expect(textOf(r)).not.toContain(UUID);
        expect(textOf(r).toLowerCase()).not.toContain(UUID);
        expect(commandCount(d)).toBe(before + 1);
      });
    }

    it('returns the earlier PENDING cue for an identical one (twin rule), comparing the UUID lower-cased', async () => {
      const fields = cue({ action: 'celebrate' });
      const first = structured(await call(mcp, 'ogf_cue', fields));
      const before = commandCount(d);
      const twin = structured(await call(mcp, 'ogf_cue', { ...fields, session_id: UUID.toUpperCase() }));
      expect(twin.pending_id).toBe(first.pending_id);
      expect(commandCount(d)).toBe(before);
      const different = structured(await call(mcp, 'ogf_cue', { ...fields, intensity: 0.25 }));
      expect(different.pending_id).not.toBe(first.pending_id);
    });
  });

  describe('[c3.2.bad-input] run_command_wait, await_command_result, cancel_command refusals', () => {
    const cases: Array<[string, string, Record<string, unknown>, RegExp]> = [
      [
        'unknown command',
        'run_command_wait',
        { command: 'rm', args: {} },
        /^UnknownCommand: command must be /,
      ],
      [
        'args not an object',
        'run_command_wait',
        { command: 'echo', args: ['x'] },
        /^InvalidArguments: args must be /,
      ],
      ['args missing', 'run_command_wait', { command: 'echo' }, /^InvalidArguments: args must be /],
      [
        'a bad param',
        'run_command_wait',
        { command: 'echo', args: { word: 'NO!' } },
        /^InvalidArguments: args\.word /,
      ],
      [
        'wait_seconds 91',
        'run_command_wait',
        { command: 'echo', args: { word: 'a' }, wait_seconds: 91 },
        /^InvalidArguments: wait_seconds must be /,
      ],
      [
        'a bad request_id',
        'run_command_wait',
        { command: 'echo', args: { word: 'a' }, request_id: 'Has Caps' },
        /^InvalidArguments: request_id must be /,
      ],
      [
        'a 501-character justification',
        'run_command_wait',
        { command: 'echo', args: { word: 'a' }, justification: 'j'.repeat(501) },
        /^InvalidArguments: justification must be /,
      ],
      [
        'a param holding a terminal escape',
        'run_command_wait',
        { command: 'echo', args: { word: 'a\u001b[2J' } },
        /^InvalidArguments: args\.word must be .* without control or bidirectional characters matching .*, got a control character$/,
      ],
      [
        'a justification holding a bidi override',
        'run_command_wait',
        { command: 'echo', args: { word: 'a' }, justification: 'fine \u202e' },
        /^InvalidArguments: justification must be .*bidirectional.*, got a control character$/,
      ],
      [
        'an unknown property',
        'run_command_wait',
        { command: 'echo', args: { word: 'a' }, shell: true },
        /^InvalidArguments: shell must be /,
      ],
      [
        'a short pending_id',
        'await_command_result',
        { pending_id: 'short' },
        /^InvalidArguments: pending_id must be /,
      ],
      [
        'a pending_id with a slash',
        'cancel_command',
        { pending_id: 'c_abc/def/ghi' },
        /^InvalidArguments: pending_id must be /,
      ],
      ['a missing pending_id', 'await_command_result', {}, /^InvalidArguments: pending_id must be /],
      [
        'an unknown pending_id',
        'await_command_result',
        { pending_id: 'c_nosuchcommand000000' },
        /^UnknownPendingId: pending_id /,
      ],
      [
        'cancel of an unknown pending_id',
        'cancel_command',
        { pending_id: 'c_nosuchcommand000000' },
        /^UnknownPendingId: pending_id /,
      ],
      ['list_commands with a property', 'list_commands', { all: true }, /^InvalidArguments: all must be /],
    ];
    for (const [what, tool, args, re] of cases) {
      it(`${tool} refuses ${what}`, async () => {
        const before = commandCount(d);
        const r = await call(mcp, tool, args);
        expect(r.isError).toBe(true);
        expect(textOf(r)).toMatch(re);
        expect(commandCount(d)).toBe(before);
      });
    }

    it('accepts a justification of exactly 500 characters', async () => {
      const r = await call(mcp, 'run_command_wait', {
        command: 'echo',
        args: { word: 'just' },
        justification: 'j'.repeat(500),
        wait_seconds: 0,
      });
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(structured(r).status).toBe('PENDING');
    });
  });

  describe('request_id (contract 3.1)', () => {
    it('returns the existing command for the same request, and RequestIdReused for a different one', async () => {
      const req = {
        command: 'echo',
        args: { word: 'idem' },
        request_id: 'req-1',
        justification: 'test',
        wait_seconds: 0,
      };
      const first = structured(await call(mcp, 'run_command_wait', req));
      expect(first.status).toBe('PENDING');
      const before = commandCount(d);
      const again = await call(mcp, 'run_command_wait', req);
      expect(structured(again).pending_id).toBe(first.pending_id);
      expect(commandCount(d)).toBe(before);

      for (const changed of [{ args: { word: 'other' } }, { justification: 'changed' }]) {
        const r = await call(mcp, 'run_command_wait', { ...req, ...changed });
        expect(r.isError).toBe(true);
        expect(textOf(r)).toMatch(/^RequestIdReused: request_id must be /);
        expect(commandCount(d)).toBe(before);
      }
    });
  });

  describe('client isolation (contract 3)', () => {
    it("[c3.auth] a second client cannot see, await or cancel the first client's pending_id, nor collide on request_id", async () => {
      const mine = structured(
        await call(mcp, 'run_command_wait', {
          command: 'echo',
          args: { word: 'mine' },
          request_id: 'shared',
          wait_seconds: 0,
        }),
      );
      const otherToken = await makeClientToken(d, 'other');
      const other = await httpClient(d.info.mcp_url, otherToken, generation);
      try {
        const missing = await call(other, 'await_command_result', {
          pending_id: 'c_nosuchcommand000000',
          wait_seconds: 0,
        });
        const theirs = await call(other, 'await_command_result', {
          pending_id: mine.pending_id,
          wait_seconds: 0,
        });
        expect(theirs.isError).toBe(true);
        // Exactly like a missing id: same code, same wording.
        expect(textOf(theirs).replace(String(mine.pending_id), 'ID')).toBe(
          textOf(missing).replace('c_nosuchcommand000000', 'ID'),
        );
        const cancel = await call(other, 'cancel_command', { pending_id: mine.pending_id });
        expect(textOf(cancel)).toMatch(/^UnknownPendingId: /);
        const own = structured(
          await call(mcp, 'await_command_result', { pending_id: mine.pending_id, wait_seconds: 0 }),
        );
        expect(own.status).toBe('PENDING');

        // request_id belongs to its client: the same key from another client is a new command of that client.
        const theirsCmd = structured(
          await call(other, 'run_command_wait', {
            command: 'echo',
            args: { word: 'theirs' },
            request_id: 'shared',
            wait_seconds: 0,
          }),
        );
        expect(theirsCmd.pending_id).not.toBe(mine.pending_id);
        const end = Date.now() + 5000;
        while (!owner.views.has(String(theirsCmd.pending_id)) && Date.now() < end)
          await new Promise((r) => setTimeout(r, 20));
        expect(owner.views.get(String(theirsCmd.pending_id))?.client).toBe('other');
        expect(owner.views.get(String(mine.pending_id))?.client).toBe('local');
      } finally {
        await other.close();
      }
    });
  });

  describe('waiting (contract 2 rule 7, 3.1)', () => {
    it('goes PENDING → SUCCEEDED when the owner approves while the call waits', async () => {
      const queued = structured(
        await call(mcp, 'run_command_wait', { command: 'echo', args: { word: 'approved' }, wait_seconds: 0 }),
      );
      expect(queued).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
      const waiting = call(
        mcp,
        'await_command_result',
        { pending_id: queued.pending_id, wait_seconds: 60 },
        { timeout: 90_000 },
      );
      const reply = await owner.approve(String(queued.pending_id));
      expect(reply.ok).toBe(true);
      const r = await waiting;
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(structured(r)).toMatchObject({ status: 'SUCCEEDED', exit_code: 0, stdout: 'said approved' });
      expect(structured(r).reason).toBeUndefined();
      expect(textOf(r)).toMatch(/^SUCCEEDED c_/);
      expect(JSON.parse(textOf(r).split('\n').slice(1).join('\n'))).toEqual(structured(r));
    });

    it('[c2.rule-7] ends a wait with PENDING (no reason, nothing "timed out") and the hint to await', async () => {
      const r = await call(mcp, 'run_command_wait', {
        command: 'echo',
        args: { word: 'slow' },
        wait_seconds: 1,
      });
      const s = structured(r);
      expect(s).toMatchObject({ status: 'PENDING', phase: 'awaiting_review' });
      expect(s.reason).toBeUndefined();
      expect(JSON.stringify(r).toLowerCase()).not.toMatch(/timed.?out/);
      expect(textOf(r)).toContain('await_command_result');
    });

    it('accepts wait_seconds 90: the wait ends as soon as the command is cancelled', async () => {
      const queued = structured(
        await call(mcp, 'run_command_wait', { command: 'echo', args: { word: 'cancel' }, wait_seconds: 0 }),
      );
      const waiting = call(
        mcp,
        'await_command_result',
        { pending_id: queued.pending_id, wait_seconds: 90 },
        { timeout: 120_000 },
      );
      await new Promise((r) => setTimeout(r, 300));
      const cancelled = await call(mcp, 'cancel_command', { pending_id: queued.pending_id });
      expect(structured(cancelled)).toMatchObject({ status: 'DENIED', reason: 'CancelledByCaller' });
      expect(textOf(cancelled)).toMatch(/^DENY CancelledByCaller/);
      const r = await waiting;
      expect(structured(r)).toMatchObject({ status: 'DENIED', reason: 'CancelledByCaller' });
      // Cancelling again changes nothing and returns the current result.
      const again = await call(mcp, 'cancel_command', { pending_id: queued.pending_id });
      expect(structured(again)).toEqual(structured(cancelled));
    });

    it('sends notifications/progress every 5 s while waiting, when the client gave a progress token', async () => {
      const queued = structured(
        await call(mcp, 'run_command_wait', { command: 'echo', args: { word: 'progress' }, wait_seconds: 0 }),
      );
      const ticks: Array<{ progress: number; total?: number; message?: string }> = [];
      const r = await call(
        mcp,
        'await_command_result',
        { pending_id: queued.pending_id, wait_seconds: 12 },
        { onprogress: (p) => ticks.push(p), timeout: 60_000 },
      );
      expect(structured(r).status).toBe('PENDING');
      expect(ticks.length).toBeGreaterThanOrEqual(2);
      expect(ticks[1]!.progress).toBeGreaterThan(ticks[0]!.progress);
      expect(ticks[0]!.total).toBe(12);
      expect(ticks[0]!.message).toContain('awaiting review');
    });
  });
});
