/**
 * Notifications through the real daemon (contracts.md 13.1): webhooks of every format and email reach
 * receivers played over loopback with the real protocols (test/helpers/receivers.ts: an HTTP server per
 * channel, a real `smtp-server`); every byte they receive is scanned for secrets. A channel that hangs or
 * answers 5xx forever changes nothing about any command: the owner decides and the command runs while that
 * channel still holds the request.
 */
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, runCli, startDaemon, waitFor } from './helpers/daemon.js';
import { mcpClient, OwnerSocket, ownerCatalog, queue, readMarks } from './helpers/owner.js';
import { panelLogin } from './helpers/panel.js';
import { HttpReceiver, type Received, SmtpReceiver } from './helpers/receivers.js';

const SECRET_PATH = '/hooks/T000-very-secret-path-4f9c2a';
const HEADER_VALUE = 'Bearer hdr-secret-7d1e0b5a93';
const SMTP_PASSWORD = 'smtp-pass-1c9e77';

let d: RunningDaemon;
let ai: Client;
let owner: OwnerSocket;
let markFile: string;
const r: Record<string, HttpReceiver> = {};
let smtp: SmtpReceiver;
let panelSecrets: string[] = [];

beforeAll(async () => {
  for (const name of ['json', 'ntfy', 'slack', 'discord', 'args', 'hang', 'fail'])
    r[name] = await HttpReceiver.start(name === 'hang' ? 'hang' : name === 'fail' ? 503 : 'ok');
  smtp = await SmtpReceiver.start();
  const dataDir = makeDataDir();
  markFile = join(dataDir, 'marks.txt');
  d = await startDaemon({
    dataDir,
    config: ownerCatalog(markFile, {
      // Cues wait for the owner like any command; nothing listens here, the cue is never approved.
      ogf_bridge: { url: 'ws://127.0.0.1:9/ogf-bridge' },
      notify: [
        {
          id: 'team-json',
          type: 'webhook',
          url_from_env: 'JSON_HOOK_URL',
          format: 'json',
          headers_from_env: { Authorization: 'JSON_HOOK_AUTH' },
          events: ['waiting', 'decided', 'failed'],
        },
        { id: 'phone', type: 'webhook', url: r.ntfy!.url('/my-topic'), format: 'ntfy' },
        { id: 'slack', type: 'webhook', url_from_env: 'SLACK_URL', format: 'slack' },
        { id: 'discord', type: 'webhook', url: r.discord!.url(), format: 'discord' },
        { id: 'verbose', type: 'webhook', url: r.args!.url(), format: 'json', include_args: true },
        { id: 'stuck', type: 'webhook', url: r.hang!.url(), format: 'json' },
        { id: 'broken', type: 'webhook', url: r.fail!.url(), format: 'json' },
        {
          id: 'mail',
          type: 'email',
          smtp_url_from_env: 'OGF_SMTP_URL',
          from: 'gate@example.com',
          to: ['me@example.com'],
        },
      ],
    }),
    env: {
      JSON_HOOK_URL: `${r.json!.url(SECRET_PATH)}`,
      JSON_HOOK_AUTH: HEADER_VALUE,
      SLACK_URL: r.slack!.url(SECRET_PATH),
      OGF_SMTP_URL: `smtp://gate:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}`,
    },
  });
  ai = await mcpClient(d);
  owner = await OwnerSocket.open(d);
  const login = await panelLogin(d);
  panelSecrets = [login.cookie.split('=')[1]!, login.key];
});

afterAll(async () => {
  await ai?.close();
  await owner?.close();
  await d?.stop();
  await Promise.all(Object.values(r).map((x) => x.close()));
  await smtp?.close();
});

/** Every byte a receiver got: method, path, every header and the body. */
function bytesOf(x: Received): string {
  return `${x.method} ${x.path}\n${JSON.stringify(x.headers)}\n${x.body}`;
}

function secrets(): string[] {
  return [d.ownerToken, d.mcpToken, ...panelSecrets, SECRET_PATH, HEADER_VALUE, SMTP_PASSWORD];
}

describe('[c13.1.never-blocks] a channel that hangs or fails forever changes nothing', () => {
  it('the owner decides and the command runs while the stuck channel still holds its request', async () => {
    const id = await queue(ai, 'mark', { word: 'first' });
    // The owner sees it at once: the snapshot or an upsert, whatever the channels do.
    const v = await owner.view(id, (x) => x.state === 'awaiting_review', 'the waiting command');
    // The stuck channel has the request and is not answering it.
    await waitFor(() => r.hang!.held.size > 0, 'the stuck channel holding a request');
    const reply = await owner.request({ type: 'approve', id, version: v.version });
    expect(reply).toMatchObject({ ok: true });
    await owner.view(id, (x) => x.state === 'succeeded', 'the command succeeded');
    expect(readMarks(markFile)).toEqual(['first']);
    // Decided and done while the stuck channel still hangs and the broken one has not given up.
    expect(r.hang!.held.size).toBeGreaterThan(0);
    expect(d.stderr()).not.toMatch(/"notify_failed".*"channel":"stuck"/);
  });

  it('gives up after three attempts (1 s and 5 s apart) and logs notify_failed with the status, never the URL', async () => {
    await waitFor(
      () => /"event":"notify_failed"[^\n]*"channel":"broken"/.test(d.stderr()),
      'notify_failed for broken',
      30_000,
    );
    const line = d
      .stderr()
      .split('\n')
      .find((l) => l.includes('"notify_failed"') && l.includes('broken'))!;
    expect(JSON.parse(line)).toMatchObject({ channel: 'broken', about: 'waiting', status: 503, attempts: 3 });
    expect(r.fail!.requests).toHaveLength(3);
    await waitFor(
      () => /"event":"notify_failed"[^\n]*"channel":"stuck"/.test(d.stderr()),
      'notify_failed for stuck',
      40_000,
    );
    const stuck = d
      .stderr()
      .split('\n')
      .find((l) => l.includes('"notify_failed"') && l.includes('stuck'))!;
    expect(JSON.parse(stuck)).toMatchObject({ channel: 'stuck', attempts: 3, error: 'TimeoutError' });
    for (const s of [SECRET_PATH, HEADER_VALUE, SMTP_PASSWORD, r.fail!.url(), r.hang!.url()])
      expect(d.stderr()).not.toContain(s);
  }, 60_000);
});

describe('[c13.1.formats] every format says exactly what contract 13.1 says', () => {
  let id: string;
  let expires: string;

  beforeAll(async () => {
    id = await queue(ai, 'mark', { word: 'zebracode' }, 'because zebracode');
    expires = (await owner.view(id, (x) => x.state === 'awaiting_review', 'waiting')).review_expires_at;
    await waitFor(
      () =>
        ['json', 'ntfy', 'slack', 'discord', 'args'].every((k) =>
          r[k]!.requests.some((q) => q.body.includes(id) || q.headers.click?.includes(id)),
        ) && smtp.mails.some((m) => m.raw.includes(id)),
      'every channel to receive the waiting message',
    );
  });

  const link = () => `${d.url}/#${id}`;
  const of = (k: string) =>
    r[k]!.requests.filter((q) => q.body.includes(id) || q.headers.click?.includes(id));

  it('json: the seven fields, to the URL from the environment with the header from the environment', () => {
    const [q] = of('json');
    expect(q!.method).toBe('POST');
    expect(q!.path).toBe(SECRET_PATH);
    expect(q!.headers.authorization).toBe(HEADER_VALUE);
    expect(q!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(q!.body)).toEqual({
      event: 'waiting',
      pending_id: id,
      client: 'local',
      command: 'mark',
      summary: 'Run mark',
      review_expires_at: expires,
      url: link(),
    });
  });

  it('ntfy: the summary as the body, Title, Click, Priority 4 and Tags', () => {
    const [q] = of('ntfy');
    expect(q!.path).toBe('/my-topic');
    expect(q!.body).toBe('Run mark');
    expect(q!.headers.title).toBe('local asks: mark');
    expect(q!.headers.click).toBe(link());
    expect(q!.headers.priority).toBe('4');
    expect(q!.headers.tags).toBe('bell');
  });

  it('slack posts {text} and discord {content}, each with the title, summary, expiry and link', () => {
    const slack = JSON.parse(of('slack')[0]!.body) as Record<string, unknown>;
    expect(Object.keys(slack)).toEqual(['text']);
    expect(slack.text).toBe(
      `*local asks: mark*\nRun mark\nExpires ${expires}\n<${link()}|Open it in the panel>`,
    );
    const discord = JSON.parse(of('discord')[0]!.body) as Record<string, unknown>;
    expect(discord.content).toBe(`**local asks: mark**\nRun mark\nExpires ${expires}\n${link()}`);
    expect(discord.allowed_mentions).toEqual({ parse: [] });
  });

  it('email: from, to, the title as the subject and the summary, expiry and link as the text, over SMTP', () => {
    const mail = smtp.mails.find((m) => m.raw.includes(id))!;
    expect(mail.from).toBe('gate@example.com');
    expect(mail.to).toEqual(['me@example.com']);
    expect(mail.raw).toMatch(/^Subject: local asks: mark\r?$/m);
    expect(mail.raw).toContain('Run mark');
    expect(mail.raw).toContain(`Expires: ${expires}`);
    expect(mail.raw).toContain(`Open: ${link()}`);
    expect(smtp.logins).toContainEqual({ username: 'gate', password: SMTP_PASSWORD });
  });

  it('[c13.1.secrets] include_args shows the arguments; no other channel does, and no secret is sent', () => {
    expect(JSON.parse(of('args')[0]!.body).summary).toBe('Run mark with word="zebracode"');
    const everything = [
      ...['json', 'ntfy', 'slack', 'discord'].flatMap((k) => r[k]!.requests.map(bytesOf)),
      ...smtp.mails.map((m) => m.raw),
    ];
    expect(everything.length).toBeGreaterThan(4);
    for (const text of everything) {
      expect(text).not.toContain('zebracode');
      for (const s of secrets()) if (!text.startsWith(`POST ${SECRET_PATH}`)) expect(text).not.toContain(s);
    }
    // Only the json channel's own request carries its URL path and header: nothing else does.
    for (const q of [...r.ntfy!.requests, ...r.slack!.requests, ...r.discord!.requests, ...r.args!.requests])
      expect(bytesOf(q)).not.toContain(HEADER_VALUE);
    for (const text of [...r.ntfy!.requests, ...r.discord!.requests, ...r.args!.requests].map(bytesOf))
      expect(text).not.toContain(SECRET_PATH);
  });

  it('decided: the json channel hears the owner’s decision', async () => {
    const v = owner.latest(id)!;
    expect((await owner.request({ type: 'deny', id, version: v.version })).ok).toBe(true);
    const decided = await waitFor(
      () => r.json!.json().find((m) => m.event === 'decided' && m.pending_id === id),
      'the decided message',
    );
    expect(decided).toMatchObject({ state: 'denied', decided_by: 'owner', reason: 'OwnerDenied' });
    // The other channels asked for waiting only (the default).
    expect(of('ntfy')).toHaveLength(1);
  });

  it('status prints each channel’s last success and last failure', async () => {
    const line = (out: string, channel: string) =>
      out.split('\n').find((l) => l.startsWith(`notify ${channel} `));
    const out = await waitFor(async () => {
      const run = await runCli(['status', '--data-dir', d.dataDir]);
      const broken = line(run.stdout, 'broken');
      return line(run.stdout, 'phone')?.includes('last success 20') && broken?.includes('503')
        ? run.stdout
        : undefined;
    }, 'status lines');
    expect(line(out, 'phone')).toMatch(
      /^notify phone \(webhook\/ntfy\): last success \d{4}-.*, last failure never$/,
    );
    expect(line(out, 'broken')).toMatch(/last success never, last failure \d{4}-\S+ \(status 503\)$/);
    expect(line(out, 'mail')).toMatch(/^notify mail \(email\): last success \d{4}-/);
    expect(out).not.toContain(SECRET_PATH);
  });
});

it('[c13.1.secrets] a cue’s session UUID is in no message, with or without include_args', async () => {
  const uuid = '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f';
  const r1 = await ai.callTool({
    name: 'ogf_cue',
    arguments: {
      session_id: uuid.toUpperCase(),
      action: 'wave',
      emotion: 'excited',
      intensity: 0.5,
      gaze: 'user',
      ttl_ms: 5000,
      message: 'hi there',
      wait_seconds: 0,
    },
  });
  const id = String((r1.structuredContent as { pending_id?: string }).pending_id);
  await waitFor(
    () => ['json', 'ntfy', 'args'].every((k) => r[k]!.requests.some((q) => bytesOf(q).includes(id))),
    'the cue’s waiting messages',
  );
  const verbose = JSON.parse(r.args!.requests.find((q) => q.body.includes(id))!.body) as Record<
    string,
    unknown
  >;
  expect(verbose.summary).toMatch(/^Avatar cue: action wave/);
  expect(JSON.parse(r.json!.requests.find((q) => q.body.includes(id))!.body).summary).toBe('Avatar cue');
  const all = [...Object.values(r).flatMap((x) => x.requests.map(bytesOf)), ...smtp.mails.map((m) => m.raw)];
  for (const text of all) {
    expect(text.toLowerCase()).not.toContain(uuid);
    expect(text).not.toContain(uuid.replaceAll('-', ''));
  }
});
