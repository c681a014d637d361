/**
 * The notify section (contract 13.1): bad channels are refused in one line naming the field and what it
 * accepts (the CLI makes that exit 2); good ones load with their defaults.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './load.js';

function load(notify: unknown) {
  const dir = mkdtempSync(join(tmpdir(), 'ogf-notify-config-'));
  const file = join(dir, 'c.json');
  writeFileSync(file, JSON.stringify({ notify }));
  return loadConfig({ dataDir: dir, config: file }, {});
}

describe('config notify', () => {
  it('loads channels with their defaults', () => {
    const c = load([
      { id: 'phone', type: 'webhook', url: 'https://ntfy.sh/t', format: 'ntfy' },
      {
        id: 'mail',
        type: 'email',
        smtp_url_from_env: 'S',
        from: 'a@b.c',
        to: ['Me <me@x.y>'],
        events: ['failed'],
      },
    ]);
    expect(c.notify).toEqual([
      {
        id: 'phone',
        type: 'webhook',
        url: 'https://ntfy.sh/t',
        format: 'ntfy',
        events: ['waiting'],
        include_args: false,
      },
      {
        id: 'mail',
        type: 'email',
        smtp_url_from_env: 'S',
        from: 'a@b.c',
        to: ['Me <me@x.y>'],
        events: ['failed'],
        include_args: false,
      },
    ]);
  });

  it.each([
    [
      [{ id: 'Bad', type: 'webhook', url: 'https://x', format: 'json' }],
      'notify[0].id: must match ^[a-z][a-z0-9-]{0,31}$',
    ],
    [[{ id: 'a', type: 'sms' }], 'notify[0].type: must be webhook or email'],
    [
      [{ id: 'a', type: 'webhook', format: 'json' }],
      'notify[0].url: a webhook needs exactly one of url or url_from_env',
    ],
    [
      [{ id: 'a', type: 'webhook', url: 'https://x', url_from_env: 'U', format: 'json' }],
      'notify[0].url: a webhook needs exactly one of url or url_from_env',
    ],
    [
      [{ id: 'a', type: 'webhook', url: 'ftp://x', format: 'json' }],
      'notify[0].url: must be an http:// or https:// URL',
    ],
    [
      [{ id: 'a', type: 'webhook', url: 'https://x', format: 'teams' }],
      'notify[0].format: must be one of json, ntfy, slack, discord',
    ],
    [
      [{ id: 'a', type: 'webhook', url: 'https://x', format: 'json', events: ['sent'] }],
      'notify[0].events[0]: must be one of waiting, decided, failed, checkpoint',
    ],
    [
      [
        {
          id: 'a',
          type: 'webhook',
          url: 'https://x',
          format: 'json',
          headers_from_env: { 'X-A': 'not a name' },
        },
      ],
      'notify[0].headers_from_env.X-A: must name an environment variable',
    ],
    [
      [{ id: 'a', type: 'email', smtp_url_from_env: 'S', from: 'nobody', to: ['a@b.c'] }],
      'notify[0].from: from must be an email address',
    ],
    [
      [{ id: 'a', type: 'email', smtp_url_from_env: 'S', from: 'a@b.c', to: [] }],
      'notify[0].to: must list at least one address',
    ],
    [
      [
        { id: 'a', type: 'webhook', url: 'https://x', format: 'json' },
        { id: 'a', type: 'webhook', url: 'https://y', format: 'json' },
      ],
      'notify[1].id: a is used by another channel',
    ],
    [
      [{ id: 'a', type: 'webhook', url: 'https://x', format: 'json', extra: 1 }],
      'notify[0].extra: unknown key',
    ],
    [
      [{ id: 'a', type: 'webhook', url: 'https://x', format: 'ntfy', actions: 'yes' }],
      'notify[0].actions: must be true or false',
    ],
    [
      [{ id: 'a', type: 'webhook', url: 'https://x', format: 'ntfy', actions: true, owner: 'Alice' }],
      'notify[0].owner: must be an owner name matching ^[a-z][a-z0-9_-]{0,31}$',
    ],
  ])('refuses %j naming the field', (notify, message) => {
    expect(() => load(notify)).toThrow(message);
  });

  it('[c19.actions] loads actions and owner per channel (off, and the first owner, when absent), and push.actions', () => {
    const c = load([
      {
        id: 'phone',
        type: 'webhook',
        url: 'https://ntfy.sh/t',
        format: 'ntfy',
        actions: true,
        owner: 'alice',
      },
    ]);
    expect(c.notify[0]).toMatchObject({ actions: true, owner: 'alice' });
    expect(c.push).toEqual({ actions: false });
    const dir = mkdtempSync(join(tmpdir(), 'ogf-notify-config-'));
    const file = join(dir, 'c.json');
    writeFileSync(file, JSON.stringify({ push: { actions: true } }));
    expect(loadConfig({ dataDir: dir, config: file }, {}).push).toEqual({ actions: true });
    writeFileSync(file, JSON.stringify({ push: { actions: 1 } }));
    expect(() => loadConfig({ dataDir: dir, config: file }, {})).toThrow(
      'push.actions: must be true or false',
    );
  });
});
