/**
 * The empty queue's help (issue 19 finding 5): a new owner saw "Nothing waits for you" and nothing else.
 * While nothing waits, this says how to connect an AI (the MCP URL and the exact command that prints its
 * token — never the token itself), what the AI can do right now (catalog commands, each upstream connected
 * or not with its exposed tool count, the avatar bridge on or off) and where the docs are. Fed by
 * `hello.setup` and `setup` frames (daemon/owner/setup.ts), so an upstream that connects after start shows.
 *
 * Every name here comes from the owner's own config (catalog command and upstream names, both restricted
 * to `[A-Za-z0-9_.-]` by the config), never from an AI or an upstream; it still goes in as text nodes only
 * (dom.ts), so nothing could become markup.
 */
import type { SetupInfo } from '../../common/owner-messages.js';
import { el } from '../dom.js';

function code(text: string, cls?: string): HTMLElement {
  return el('code', cls === undefined ? {} : { class: cls }, text);
}

/** "a, b and c" of code elements. */
function listOf(names: readonly string[]): Array<Node | string> {
  const out: Array<Node | string> = [];
  names.forEach((n, i) => {
    if (i > 0) out.push(i === names.length - 1 ? ' and ' : ', ');
    out.push(code(n));
  });
  return out;
}

function upstreamLine(u: SetupInfo['upstreams'][number]): HTMLElement {
  const state = u.connected
    ? `connected, ${u.tools} tool${u.tools === 1 ? '' : 's'} exposed`
    : `not connected yet${u.tools > 0 ? ` (${u.tools} tools listed from before)` : ''}`;
  return el(
    'li',
    { 'data-upstream': u.name, 'data-connected': String(u.connected) },
    'Upstream ',
    code(u.name),
    ': ',
    el('span', { class: u.connected ? 'fr-on' : 'fr-off' }, state),
  );
}

/**
 * `ogf-broker init` as this daemon's owner runs it (contract 17): the token command's program and data dir,
 * `init` in place of `token mcp` — so it writes the config of this very data dir.
 */
export function initCommand(tokenCommand: string): string {
  return tokenCommand.replace(/ token mcp( |$)/, ' init$1');
}

function canDo(s: SetupInfo): HTMLElement {
  const items: HTMLElement[] = [];
  // Contract 17: with nothing gated yet, the first step is a starter config.
  if (s.commands.length === 0 && s.upstreams.length === 0)
    items.push(
      el(
        'li',
        { 'data-part': 'init' },
        'Nothing is gated yet. Run in a terminal: ',
        code(initCommand(s.token_command), 'fr-copy fr-init'),
        ' It writes a starter config (the filesystem server over ~/ogf-notes: reads allowed, writes under drafts/ allowed, the rest asked); then restart the daemon.',
      ),
    );
  items.push(
    el(
      'li',
      { 'data-part': 'commands' },
      s.commands.length === 0
        ? 'No catalog commands (add them under "commands" in the config).'
        : el('span', {}, 'Catalog commands (run_command_wait): ', ...listOf(s.commands), '.'),
    ),
  );
  if (s.upstreams.length === 0)
    items.push(el('li', { 'data-part': 'upstreams' }, 'No upstream MCP servers.'));
  for (const u of s.upstreams) items.push(upstreamLine(u));
  items.push(
    el(
      'li',
      { 'data-part': 'bridge' },
      'Avatar bridge (ogf_cue): ',
      s.ogf_bridge_configured
        ? el('span', { class: 'fr-on' }, 'on')
        : el('span', { class: 'fr-off' }, 'off (set ogf_bridge.url in the config, or OGF_BRIDGE_URL)'),
    ),
  );
  return el('ul', { class: 'fr-can' }, ...items);
}

/** Renders the help into `node`; shown only while the queue is empty and the daemon has sent it. */
export class FirstRun {
  readonly #node: HTMLElement;
  #known = false;
  #wanted = false;

  constructor(node: HTMLElement) {
    this.#node = node;
    node.hidden = true;
  }

  update(s: SetupInfo): void {
    this.#known = true;
    const rows: Array<[string, Array<Node | string>]> = [
      ['MCP endpoint', [code(s.mcp_url, 'fr-copy')]],
      [
        'MCP token',
        s.token_fixed_by_env
          ? ["Fixed by OGF_BROKER_MCP_TOKEN in the daemon's environment: use that value."]
          : [
              'Run in a terminal: ',
              code(s.token_command, 'fr-copy fr-cmd'),
              ' Its last line is the token of client local; add ',
              code('--client NAME'),
              ' for another client. The panel never shows tokens.',
            ],
      ],
      [
        'The AI can use',
        [canDo(s), 'Its requests wait here for your decision, unless a grant or policy you set allows them.'],
      ],
      ['Docs', [...listOf(s.docs), ' (connecting ChatGPT, Claude and others).']],
    ];
    if (s.public_mcp_url !== undefined)
      rows.splice(1, 0, ['Public endpoint', [code(s.public_mcp_url, 'fr-copy')]]);
    const list = el('dl', { class: 'fr-rows' });
    for (const [term, parts] of rows) list.append(el('dt', {}, term), el('dd', {}, ...parts));
    this.#node.replaceChildren(el('h3', { id: 'first-run-title' }, 'Connect an AI'), list);
    this.#render();
  }

  /** Called by the queue's layout: true while nothing waits. */
  show(wanted: boolean): void {
    this.#wanted = wanted;
    this.#render();
  }

  #render(): void {
    this.#node.hidden = !(this.#known && this.#wanted);
  }
}
