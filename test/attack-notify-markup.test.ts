/**
 * The AI writes markup into a notification (contract 13.1 (v4); issue 35 finding 8). With `include_args`, a
 * request's arguments reach Slack and Discord, whose clients render markdown: an argument holding
 * `[Open it in the panel](https://evil…)` became a second, fake "open" link in Discord, and `<url|text>` or
 * `<@U…>` would be a link or a ping in Slack. The attack runs as the AI would run it — a real MCP call through
 * the real daemon — and the channels are HTTP receivers on loopback that keep every byte the daemon posted.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, type RunningDaemon, startDaemon, waitFor } from './helpers/daemon.js';
import { mcpClient, queue } from './helpers/owner.js';
import { HttpReceiver } from './helpers/receivers.js';

const MARKUP =
  '**URGENT** [Open it in the panel](https://evil.example/x) <https://evil.example/y|click> @everyone <@123> _it_ ~gone~ `code` ||hidden|| https://evil.example/z';

let d: RunningDaemon;
let ai: Client;
const r: Record<string, HttpReceiver> = {};

beforeAll(async () => {
  for (const name of ['slack', 'discord']) r[name] = await HttpReceiver.start('ok');
  d = await startDaemon({
    dataDir: makeDataDir(),
    config: {
      commands: {
        say: {
          description: 'Say a text',
          argv: ['/bin/echo', '{text}'],
          params: { text: { type: 'string', max_length: 400 } },
        },
      },
      notify: [
        { id: 'slack', type: 'webhook', url: r.slack!.url(), format: 'slack', include_args: true },
        { id: 'discord', type: 'webhook', url: r.discord!.url(), format: 'discord', include_args: true },
      ],
    },
  });
  ai = await mcpClient(d);
});

afterAll(async () => {
  await ai?.close();
  await d?.stop();
  await Promise.all(Object.values(r).map((x) => x.close()));
});

describe('[c13.1.markup] markup the AI writes into its arguments renders nowhere', () => {
  let slack: string;
  let discord: string;

  beforeAll(async () => {
    await queue(ai, 'say', { text: MARKUP });
    slack = await waitFor(() => r.slack!.requests[0]?.body, 'the slack message');
    discord = await waitFor(() => r.discord!.requests[0]?.body, 'the discord message');
  });

  it('discord: every marker the AI wrote is escaped, so its text shows as written and links only the card', () => {
    const content = (JSON.parse(discord) as { content: string }).content;
    const [title, summary, , link] = content.split('\n');
    expect(title).toBe('**local asks: say**');
    expect(link?.startsWith(`${d.url}/#`)).toBe(true);
    // The AI's masked link, emphasis, spoiler, mentions and bare address, each escaped where it would open markup.
    expect(summary).toContain('\\[Open it in the panel\\](https\\://evil.example/x)');
    expect(summary).toContain('\\*\\*URGENT\\*\\*');
    expect(summary).toContain('\\@everyone \\<\\@123>');
    expect(summary).toContain('\\_it\\_ \\~gone\\~ \\`code\\` \\|\\|hidden\\|\\|');
    expect(summary).toContain('https\\://evil.example/z');
    // No unescaped marker is left in the AI's part: each is preceded by a backslash.
    const said = summary!.slice(summary!.indexOf('text='));
    for (const m of said.matchAll(/[*_~`|[\]<@]/g)) expect(said[m.index - 1]).toBe('\\');
    expect((JSON.parse(discord) as { allowed_mentions: unknown }).allowed_mentions).toEqual({ parse: [] });
  });

  it('slack: no <link|text> or <@mention> can be written, and emphasis markers cannot pair', () => {
    const text = (JSON.parse(slack) as { text: string }).text;
    const summary = text.split('\n')[1]!;
    expect(summary).not.toMatch(/<[^>]*>/);
    expect(summary).toContain('&lt;https://evil.example/y|click&gt;');
    expect(summary).toContain('&lt;@123&gt;');
    // Every emphasis or code marker the AI wrote is fenced by zero-width spaces (mrkdwn has no escape for them).
    for (const m of summary.matchAll(/[*_~`]/g)) {
      expect(summary[m.index - 1]).toBe('\u200b');
      expect(summary[m.index + 1]).toBe('\u200b');
    }
    // The one link in the message is the daemon's own, to the card.
    expect(text.match(/<[^>]*>/g)).toEqual([
      expect.stringMatching(new RegExp(`^<${d.url}/#[^|]+\\|Open it in the panel>$`)),
    ]);
  });
});
