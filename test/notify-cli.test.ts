/**
 * `ogf-broker notify test [--channel ID]` and doctor's notify checks (contracts.md 1.1, 13.1), run as the
 * owner runs them against receivers played over loopback (an HTTP server, a real `smtp-server`): exit 0 only
 * when every channel accepted (2xx / SMTP 250); doctor says which variable is missing or invalid and never
 * prints a variable's value.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, runCli } from './helpers/daemon.js';
import { HttpReceiver, SmtpReceiver } from './helpers/receivers.js';

const SECRET = '/services/T0/B0/very-secret-slack-path';
let ok: HttpReceiver;
let bad: HttpReceiver;
let smtp: SmtpReceiver;
let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  ok = await HttpReceiver.start();
  bad = await HttpReceiver.start(500);
  smtp = await SmtpReceiver.start();
  dataDir = makeDataDir();
  writeFileSync(
    join(dataDir, 'config.json'),
    JSON.stringify({
      public_url: 'https://gate.example.com',
      notify: [
        { id: 'phone', type: 'webhook', url: ok.url('/topic'), format: 'ntfy' },
        { id: 'team', type: 'webhook', url_from_env: 'TEAM_URL', format: 'slack' },
        {
          id: 'mail',
          type: 'email',
          smtp_url_from_env: 'MAIL_URL',
          from: 'gate@example.com',
          to: ['me@example.com'],
        },
        { id: 'down', type: 'webhook', url: bad.url(), format: 'json' },
      ],
    }),
  );
  env = {
    OGF_BROKER_DATA_DIR: dataDir,
    TEAM_URL: ok.url(SECRET),
    MAIL_URL: `smtp://127.0.0.1:${smtp.port}`,
  };
});

afterAll(async () => {
  await ok?.close();
  await bad?.close();
  await smtp?.close();
});

describe('[c13.1.formats] notify test', () => {
  it('sends one test message through each channel and exits 1 when one refused it', async () => {
    const run = await runCli(['notify', 'test'], env);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout.split('\n').filter(Boolean)).toEqual([
      'ok   phone (webhook/ntfy): accepted (HTTP 200)',
      'ok   team (webhook/slack): accepted (HTTP 200)',
      'ok   mail (email): accepted (SMTP 250)',
      'FAIL down (webhook/json): not accepted (status 500)',
    ]);
    const ntfy = ok.requests.find((q) => q.path === '/topic')!;
    expect(ntfy.headers.title).toBe('ogf-broker test message');
    expect(ntfy.headers.click).toBe('https://gate.example.com/');
    expect(ntfy.body).toBe('A test message from ogf-broker: the channel phone works.');
    expect(smtp.mails.at(-1)!.raw).toMatch(/^Subject: ogf-broker test message\r?$/m);
    expect(JSON.parse(bad.requests[0]!.body)).toMatchObject({ event: 'test', channel: 'down' });
    expect(run.stdout + run.stderr).not.toContain(SECRET);
  });

  it('--channel sends through that one only and exits 0 when it accepted; an unknown id exits 2', async () => {
    const before = bad.requests.length;
    const run = await runCli(['notify', 'test', '--channel', 'phone'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('ok   phone (webhook/ntfy): accepted (HTTP 200)\n');
    expect(bad.requests.length).toBe(before);
    const unknown = await runCli(['notify', 'test', '--channel', 'nope'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--channel: must be one of phone, team, mail, down, got "nope"');
  });

  it('doctor says which variable is missing or invalid, never a value', async () => {
    const run = await runCli(['doctor'], { ...env, TEAM_URL: 'not a url', MAIL_URL: '' });
    const lines = run.stdout.split('\n');
    expect(lines).toContain('ok   notify phone: ntfy webhook, URL in the config; events waiting');
    expect(lines).toContain('FAIL notify team: TEAM_URL does not hold an http:// or https:// URL');
    expect(lines).toContain(
      'FAIL notify mail: MAIL_URL is not set (it must hold an smtp:// or smtps:// URL)',
    );
    expect(run.stdout).not.toContain('not a url');
    const good = await runCli(['doctor'], env);
    expect(good.stdout).toContain('ok   notify team: slack webhook, URL from TEAM_URL; events waiting');
    expect(good.stdout).not.toContain(SECRET);
  });
});
