/**
 * Deciding from a notification (contracts.md 19 (v4)) through the real daemon: an ntfy-format receiver on
 * loopback plays the phone's ntfy app — it reads the `Actions` header of what it received and POSTs the
 * tapped `http` action as the app does; a real SMTP server (`smtp-server`) receives the mail whose Deny link
 * is opened (GET: the page, nothing decided) and its button pressed (POST). Then the door is attacked as a
 * stranger on the port would: a replayed action, one used after its command changed, one for another
 * command, guessed tokens (410, and 429 once the gate is full), and commands that must never get actions
 * (a passkey, several owners). Every decision's audit entry names the channel (`via`).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { auditRows } from './helpers/mcp.js';
import { mcpClient, OwnerSocket, ownerCatalog, queue, readMarks } from './helpers/owner.js';
import { HttpReceiver, type Received, SmtpReceiver } from './helpers/receivers.js';

let d: RunningDaemon;
let ai: Client;
let owner: OwnerSocket;
let markFile: string;
const r: Record<string, HttpReceiver> = {};
let smtp: SmtpReceiver;
let config: Record<string, unknown>;

beforeAll(async () => {
  for (const name of ['ntfy', 'slack', 'discord', 'plain']) r[name] = await HttpReceiver.start();
  smtp = await SmtpReceiver.start();
  const dataDir = makeDataDir();
  markFile = join(dataDir, 'marks.txt');
  const base = ownerCatalog(markFile);
  const mark = (base.commands as Record<string, Record<string, unknown>>).mark!;
  config = {
    ...base,
    commands: {
      ...(base.commands as object),
      guarded: { ...mark, description: 'Needs a passkey', require_passkey: true },
      team: { ...mark, description: 'Two owners', approvals: 2 },
    },
    notify: [
      { id: 'phone', type: 'webhook', url: r.ntfy!.url('/topic'), format: 'ntfy', actions: true },
      { id: 'slack', type: 'webhook', url: r.slack!.url(), format: 'slack', actions: true, owner: 'owner' },
      { id: 'discord', type: 'webhook', url: r.discord!.url(), format: 'discord', actions: true },
      { id: 'plain', type: 'webhook', url: r.plain!.url(), format: 'json' },
      {
        id: 'mail',
        type: 'email',
        smtp_url_from_env: 'OGF_SMTP_URL',
        from: 'gate@example.com',
        to: ['me@example.com'],
        actions: true,
      },
    ],
  };
  d = await startDaemon({ dataDir, config, env: { OGF_SMTP_URL: `smtp://127.0.0.1:${smtp.port}` } });
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d);
});

afterAll(async () => {
  await ai?.close();
  await owner?.close();
  await d?.stop();
  await Promise.all(Object.values(r).map((x) => x.close()));
  await smtp?.close();
});

/**
 * Queues a command so that its own `waiting` message goes out: contract 13.1 sends the 6th and later of 10 s
 * as one digest (which carries no actions), so at most 5 are queued in any 10 s.
 */
const queuedAt: number[] = [];
async function ask(command: string, word: string): Promise<string> {
  const recent = queuedAt.filter((t) => Date.now() - t < 10_500);
  if (recent.length >= 5) await new Promise((res) => setTimeout(res, 10_500 - (Date.now() - recent[0]!)));
  queuedAt.push(Date.now());
  return queue(ai, command, { word });
}

/** The command's row as committed. */
function row(id: string): { state: string; version: number } {
  const db = new Database(join(d.dataDir, 'broker.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT state, version FROM commands WHERE id = ?').get(id) as {
      state: string;
      version: number;
    };
  } finally {
    db.close();
  }
}

/** The ntfy message a receiver got for command `id` (its Click header names the card). */
function ntfyFor(id: string): Promise<Received> {
  return waitFor(
    () => r.ntfy!.requests.find((q) => String(q.headers.click ?? '').endsWith(`#${id}`)),
    `the ntfy message of ${id}`,
  );
}

/** ntfy's short `Actions` form: `http, Label, url, key=value…; …` → label → { url, method }. */
function ntfyActions(m: Received): Map<string, { url: string; method: string }> {
  const out = new Map<string, { url: string; method: string }>();
  const header = m.headers.actions;
  if (typeof header !== 'string') return out;
  for (const part of header.split(';')) {
    const [type, label, url, ...rest] = part.split(',').map((x) => x.trim());
    if (type !== 'http') continue;
    const method = rest.find((x) => x.startsWith('method='))?.slice('method='.length) ?? 'POST';
    out.set(label!, { url: url!, method });
  }
  return out;
}

/** What the phone's ntfy app does when its owner taps the button `label`: the http action's request. */
async function tap(m: Received, label: string): Promise<{ status: number; body: string }> {
  const a = ntfyActions(m).get(label);
  if (a === undefined) throw new Error(`no ${label} action in ${JSON.stringify(m.headers.actions)}`);
  const res = await fetch(a.url, { method: a.method });
  return { status: res.status, body: await res.text() };
}

/** The decision entries of a command: action, actor and data. */
function decisions(id: string): Array<{ action: string; actor: string; detail: Record<string, unknown> }> {
  return auditRows(d)
    .filter((a) => a.command_id === id && (a.action === 'approve' || a.action === 'deny'))
    .map((a) => ({
      action: String(a.action),
      actor: String(a.actor),
      detail: JSON.parse(String(a.detail)) as Record<string, unknown>,
    }));
}

/** The mail about command `id`, decoded from quoted-printable. */
async function mailFor(id: string): Promise<string> {
  const mail = await waitFor(
    () => smtp.mails.find((m) => m.raw.replace(/=\r?\n/g, '').includes(`#${id}`)),
    `the mail of ${id}`,
  );
  return mail.raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

const ACT_URL = /https?:\/\/[^\s/]+\/act\/[A-Za-z0-9_-]{43}/g;

describe('actions', () => {
  it('[c19.actions] an ntfy tap on Approve decides as the channel’s owner; the audit names the channel', async () => {
    const id = await ask('mark', 'tapped');
    const m = await ntfyFor(id);
    const actions = ntfyActions(m);
    expect([...actions.keys()]).toEqual(['Approve', 'Deny']);
    for (const a of actions.values()) {
      expect(a.url).toMatch(new RegExp(`^${d.url}/act/[A-Za-z0-9_-]{43}$`));
      expect(a.method).toBe('POST');
    }
    const done = await tap(m, 'Approve');
    expect(done.status).toBe(200);
    expect(done.body).toContain('Approved');
    await waitFor(() => readMarks(markFile).includes('tapped') || undefined, 'the approved mark ran');
    expect(decisions(id)).toEqual([
      expect.objectContaining({
        action: 'approve',
        actor: 'owner',
        detail: expect.objectContaining({ via: 'phone' }),
      }),
    ]);
    // The same message's Deny is stale now (the command moved on): 410, nothing changes.
    expect((await tap(m, 'Deny')).status).toBe(410);
    expect(decisions(id)).toHaveLength(1);
  });

  it('[c19.actions] Slack and Discord carry the links; a channel without actions carries none', async () => {
    const id = await ask('mark', 'links');
    await ntfyFor(id);
    const slack = await waitFor(() => r.slack!.requests.find((q) => q.body.includes(id)), 'slack');
    const discord = await waitFor(() => r.discord!.requests.find((q) => q.body.includes(id)), 'discord');
    const plain = await waitFor(() => r.plain!.requests.find((q) => q.body.includes(id)), 'plain');
    const text = (JSON.parse(slack.body) as { text: string }).text;
    expect(text).toMatch(
      /<https?:\/\/\S+\/act\/[A-Za-z0-9_-]{43}\|Approve>\n<https?:\/\/\S+\/act\/[A-Za-z0-9_-]{43}\|Deny>$/,
    );
    const content = (JSON.parse(discord.body) as { content: string }).content;
    expect(content).toMatch(
      /\nApprove: https?:\/\/\S+\/act\/[A-Za-z0-9_-]{43}\nDeny: https?:\/\/\S+\/act\/[A-Za-z0-9_-]{43}$/,
    );
    expect(plain.body).not.toContain('/act/');
    // Each channel got its own tokens: four different URLs (and the mail's, another two).
    const urls = new Set([...text.matchAll(ACT_URL), ...content.matchAll(ACT_URL)].map((x) => x[0]));
    expect(urls.size).toBe(4);
    await owner.request({ type: 'deny', id, version: row(id).version });
  });

  it('[c19.actions] the mail’s Deny link shows a page (nothing decided); its one button denies', async () => {
    const id = await ask('mark', 'mailed');
    const text = await mailFor(id);
    const deny = /^Deny: (\S+)$/m.exec(text)?.[1];
    expect(deny).toMatch(/\/act\/[A-Za-z0-9_-]{43}$/);
    const page = await fetch(deny!);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('set-cookie')).toBeNull();
    expect(html).toContain('Run mark with word=&quot;mailed&quot;');
    expect(html.match(/<form /g)).toHaveLength(1);
    expect(html).toContain('<form method="post"><button');
    // The page writes no token back out (its form posts to the URL it came from).
    expect(html).not.toMatch(/[A-Za-z0-9_-]{43}/);
    expect(html).not.toContain('<script');
    // A GET (a mail scanner following the link) decides nothing, and may be repeated.
    expect(row(id).state).toBe('awaiting_review');
    expect((await fetch(deny!)).status).toBe(200);
    // The button: the browser's form POST.
    const done = await fetch(deny!, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('Denied');
    expect(row(id).state).toBe('denied');
    expect(decisions(id)).toEqual([
      expect.objectContaining({
        action: 'deny',
        actor: 'owner',
        detail: expect.objectContaining({ via: 'mail' }),
      }),
    ]);
    // Used once: the page and the button are gone.
    expect((await fetch(deny!)).status).toBe(410);
  });

  it('[c19.actions] status says which channels can decide', async () => {
    const lines = await waitFor(async () => {
      const run = await runCli(['status', '--data-dir', d.dataDir]);
      const out = run.stdout.split('\n').filter((l) => l.startsWith('notify '));
      return out.length >= 5 ? out : undefined;
    }, 'status lines');
    expect(lines.find((l) => l.startsWith('notify phone '))).toContain('(webhook/ntfy, can decide as owner)');
    expect(lines.find((l) => l.startsWith('notify mail '))).toContain('(email, can decide as owner)');
    expect(lines.find((l) => l.startsWith('notify plain '))).toContain('(webhook/json)');
  });
});

describe('actions and reload', () => {
  it('[c19.actions] a reload carries a channel’s actions: turned off, the next message has none', async () => {
    const channels = config.notify as Array<Record<string, unknown>>;
    const off = { ...config, notify: channels.map((c) => (c.id === 'phone' ? { ...c, actions: false } : c)) };
    writeFileSync(join(d.dataDir, 'config.json'), JSON.stringify(off), { mode: 0o600 });
    const run = await runCli(['reload', '--data-dir', d.dataDir]);
    expect(run.code).toBe(0);
    const id = await ask('mark', 'reloaded');
    const m = await ntfyFor(id);
    expect(m.headers.actions).toBeUndefined();
    const mail = await mailFor(id);
    expect(mail).toMatch(/^Deny: \S+\/act\//m);
    await owner.request({ type: 'deny', id, version: row(id).version });
    writeFileSync(join(d.dataDir, 'config.json'), JSON.stringify(config), { mode: 0o600 });
    expect((await runCli(['reload', '--data-dir', d.dataDir])).code).toBe(0);
  });
});

describe('actions, attacked', () => {
  it('[c19.actions-attack] a replayed action answers 410 and decides nothing again', async () => {
    const id = await ask('mark', 'replay');
    const m = await ntfyFor(id);
    expect((await tap(m, 'Deny')).status).toBe(200);
    expect((await tap(m, 'Deny')).status).toBe(410);
    expect((await tap(m, 'Approve')).status).toBe(410);
    expect(row(id).state).toBe('denied');
    expect(decisions(id)).toHaveLength(1);
    expect(readMarks(markFile)).not.toContain('replay');
  });

  it('[c19.actions-attack] an action used after its command changed (decided in the panel) is stale: 410', async () => {
    const id = await ask('mark', 'stale');
    const m = await ntfyFor(id);
    const v = row(id).version;
    expect(await owner.request({ type: 'deny', id, version: v })).toMatchObject({ ok: true });
    const late = await tap(m, 'Approve');
    expect(late.status).toBe(410);
    expect(late.body).toContain('Nothing was decided');
    expect(row(id).state).toBe('denied');
    expect(decisions(id).map((x) => x.detail.via)).toEqual([undefined]);
  });

  it('[c19.actions-attack] an action is bound to its command: A’s token decides A, never B waiting beside it', async () => {
    const a = await ask('mark', 'cmda');
    const b = await ask('mark', 'cmdb');
    const ma = await ntfyFor(a);
    await ntfyFor(b);
    expect((await tap(ma, 'Deny')).status).toBe(200);
    expect(row(a).state).toBe('denied');
    expect(row(b).state).toBe('awaiting_review');
    expect(decisions(b)).toEqual([]);
    await owner.request({ type: 'deny', id: b, version: row(b).version });
  });

  it('[c19.actions-attack] never offered for a command needing a passkey or several owners', async () => {
    const g = await ask('guarded', 'guarded');
    const t = await ask('team', 'team');
    for (const id of [g, t]) {
      const m = await ntfyFor(id);
      expect(m.headers.actions).toBeUndefined();
      expect(await mailFor(id)).not.toContain('/act/');
      const s = await waitFor(() => r.slack!.requests.find((q) => q.body.includes(id)), 'slack');
      expect(s.body).not.toContain('/act/');
    }
    for (const id of [g, t]) await owner.request({ type: 'deny', id, version: row(id).version });
  });

  it('[c19.actions-attack] guessed tokens: every one 410 (or 429 once the gate is full), nothing decided', async () => {
    const id = await ask('mark', 'guessed');
    const m = await ntfyFor(id);
    // A stranger on the port: well-formed random tokens, malformed ones, other methods.
    const guesses = Array.from({ length: 48 }, () => `${d.url}/act/${randomBytes(32).toString('base64url')}`);
    const answers = await Promise.all(guesses.map((u) => fetch(u, { method: 'POST' }).then((x) => x.status)));
    expect(answers.every((s) => s === 410 || s === 429)).toBe(true);
    // 4 checked at a time and 32 waiting: of 48 at once, some are turned away unchecked.
    expect(answers.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(answers.filter((s) => s === 410).length).toBeGreaterThan(0);
    expect((await fetch(`${d.url}/act/short`, { method: 'POST' })).status).toBe(410);
    expect((await fetch(`${d.url}/act/${'A'.repeat(43)}`, { method: 'PUT' })).status).toBe(405);
    expect(row(id).state).toBe('awaiting_review');
    // The owner's real action still works once the guesses have drained.
    const real = await waitFor(async () => {
      const res = await tap(m, 'Deny');
      return res.status === 429 ? undefined : res;
    }, 'the gate drained');
    expect(real.status).toBe(200);
    expect(row(id).state).toBe('denied');
  });

  it('[c19.actions-attack] the database holds each action only as a hash', async () => {
    const id = await ask('mark', 'hashed');
    const m = await ntfyFor(id);
    const tokens = [...ntfyActions(m).values()].map((a) => a.url.split('/act/')[1]!);
    await mailFor(id);
    await waitFor(() => r.discord!.requests.find((q) => q.body.includes(id)), 'discord');
    await waitFor(() => r.slack!.requests.find((q) => q.body.includes(id)), 'slack');
    const db = new Database(join(d.dataDir, 'broker.db'), { readonly: true, fileMustExist: true });
    try {
      const rows = db.prepare('SELECT * FROM actions WHERE command_id = ?').all(id) as Array<
        Record<string, unknown>
      >;
      expect(rows).toHaveLength(8);
      expect([...new Set(rows.map((x) => x.channel))].sort()).toEqual(['discord', 'mail', 'phone', 'slack']);
      const dump = JSON.stringify(db.prepare('SELECT * FROM actions').all());
      for (const t of tokens) expect(dump).not.toContain(t);
      expect(rows.every((x) => /^[0-9a-f]{64}$/.test(String(x.token_hash)))).toBe(true);
    } finally {
      db.close();
    }
    await owner.request({ type: 'deny', id, version: row(id).version });
  });
});
