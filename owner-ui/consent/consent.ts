/**
 * The consent page (contract 15): an AI asked, through OAuth, to act on this daemon's /mcp. The owner —
 * signed in to the panel, else sent to log in first (the request id waits in localStorage and the login
 * page comes back here) — sees one decision card: the name the client gives itself AND the host of its
 * client_id (a Client ID Metadata Document's URL: the one name the client cannot pick freely; a client that
 * registered itself here has none, and the card says so), the host its answer is sent to, and the client
 * name this connection will use on /mcp (suggested, editable, checked as typed and by the daemon). A name
 * used before (contract 15 v4) shows what it inherits in a box Allow needs ticked; a redirect that is not
 * https shows its scheme (an app on this device) or that it is loopback.
 *
 * Allow / Deny are decision buttons like every card's (click-safety.ts): inert for the first second the card
 * is on screen and for a second after it moves, so a page that opens under the owner's pointer cannot take a
 * click meant for something else. The page may not be framed (CSP frame-ancestors 'none').
 */
import { ClickGuard } from '../click-safety.js';
import { panelKey } from '../connection.js';
import { byId, el } from '../dom.js';

type RedirectTarget =
  | { kind: 'web'; host: string }
  | { kind: 'app'; scheme: string }
  | { kind: 'loopback'; origin: string };

interface ConsentView {
  id: string;
  client_name?: string;
  client_id: string;
  kind: 'cimd' | 'dcr';
  client_id_host?: string;
  redirect_host: string;
  redirect_target?: RedirectTarget;
  suggested_name: string;
  expires_at: string;
}

/** The daemon's answer for a name (GET /owner/oauth/name): refused, or what it would inherit. */
interface NameAnswer {
  client_name?: string;
  refused?: string;
  inherits?: { commands: number; grants: number; text: string };
}

/** Where a consent request waits while the owner logs in (login.ts comes back to it). */
export const PENDING_ITEM = 'ogf-consent-request';
const NAME_RE = /^[a-z][a-z0-9_-]{0,31}$/;

const status = byId('consent-status');
const slot = byId('consent-slot');
let busy = false;
const guard = new ClickGuard(() => busy);

function requestId(): string | undefined {
  const m = /^#request=([A-Za-z0-9_-]{1,64})$/.exec(location.hash);
  if (m?.[1] !== undefined) return m[1];
  try {
    const saved = JSON.parse(localStorage.getItem(PENDING_ITEM) ?? 'null') as {
      id?: string;
      at?: number;
    } | null;
    if (saved?.id && typeof saved.at === 'number' && Date.now() - saved.at < 10 * 60 * 1000) return saved.id;
  } catch {
    // Nothing saved.
  }
  return undefined;
}

function headers(): Record<string, string> {
  const key = panelKey();
  return key === null ? {} : { 'X-OGF-Owner-Key': key };
}

function showLogin(): void {
  status.textContent = '';
  slot.replaceChildren(
    el(
      'p',
      {},
      'An AI asks to connect. Sign in to the owner panel first: open the login URL that ',
      el('code', {}, 'ogf-broker token owner'),
      ' prints, in this browser. This request waits for you and comes back after you sign in.',
    ),
    el('p', {}, el('a', { href: '/login' }, 'Log in here')),
  );
}

function row(label: string, value: Node | string): HTMLElement {
  return el('div', { class: 'consent-row' }, el('dt', {}, label), el('dd', {}, value));
}

/**
 * Where the answer goes (contract 15 v4): an https host in bold; any other scheme is an app on this
 * device, named by its scheme — `https.claude.ai://claude.ai/cb` is not the site claude.ai — and loopback
 * http a program on this computer.
 */
function target(view: ConsentView): Node {
  const t = view.redirect_target ?? { kind: 'web', host: view.redirect_host };
  if (t.kind === 'web') return el('strong', { class: 'host' }, t.host);
  if (t.kind === 'app')
    return el('span', { class: 'unverified' }, 'an app on this device: ', el('code', {}, t.scheme));
  return el('span', {}, 'a program on this computer: ', el('code', {}, t.origin));
}

async function askName(name: string): Promise<NameAnswer | undefined> {
  try {
    const r = await fetch(`/owner/oauth/name?client_name=${encodeURIComponent(name)}`, {
      credentials: 'same-origin',
      headers: headers(),
      cache: 'no-store',
    });
    return r.ok ? ((await r.json()) as NameAnswer) : undefined;
  } catch {
    return undefined;
  }
}

async function decide(
  id: string,
  card: HTMLElement,
  decision: 'allow' | 'deny',
  name: string,
  inherit = false,
): Promise<void> {
  busy = true;
  guard.sync(card);
  const msg = card.querySelector<HTMLElement>('.card-msg')!;
  msg.textContent = '';
  let r: Response;
  try {
    r = await fetch(`/owner/oauth/consent/${id}`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', ...headers() },
      body: JSON.stringify(
        decision === 'allow'
          ? { decision, client_name: name, ...(inherit ? { inherit } : {}) }
          : { decision },
      ),
    });
  } catch {
    busy = false;
    guard.sync(card);
    msg.textContent = 'The daemon does not answer. Is it running?';
    return;
  }
  const body = (await r.json().catch(() => ({}))) as { redirect?: string; error?: { message?: string } };
  if (r.ok && typeof body.redirect === 'string') {
    localStorage.removeItem(PENDING_ITEM);
    status.textContent =
      decision === 'allow' ? 'Allowed. Returning to the AI…' : 'Denied. Returning to the AI…';
    location.assign(body.redirect);
    return;
  }
  busy = false;
  guard.sync(card);
  msg.textContent = body.error?.message ?? `Refused (HTTP ${r.status}).`;
}

/**
 * The client name's field and its checks as the owner types: its pattern, and (contract 15 v4) what a
 * name used before inherits, in a box Allow needs ticked. The daemon is asked as the owner types (the
 * latest answer wins), and checks the tick itself on Allow.
 */
class NameField {
  readonly input: HTMLInputElement;
  readonly help: HTMLElement;
  readonly inheritBox: HTMLElement;
  readonly #inheritInput: HTMLInputElement;
  readonly #inheritText: HTMLElement;
  #asked = 0;
  /** Where the card says what is wrong: the card's message line, made here and placed by consentCard. */
  readonly msg = el('p', { class: 'card-msg', role: 'alert' });

  constructor(suggested: string) {
    this.input = el('input', {
      id: 'client-name',
      name: 'client_name',
      value: suggested,
      autocomplete: 'off',
      spellcheck: 'false',
      maxlength: 32,
      'aria-describedby': 'client-name-help',
    });
    this.help = el(
      'p',
      { id: 'client-name-help', class: 'hint' },
      'Lower-case letters, digits, - and _; starts with a letter; at most 32. Its requests show this name, and it sees only its own.',
    );
    this.#inheritInput = el('input', { type: 'checkbox', id: 'inherit-name', name: 'inherit' });
    this.#inheritText = el('span', {});
    this.inheritBox = el(
      'label',
      { class: 'inherit', for: 'inherit-name' },
      this.#inheritInput,
      ' ',
      this.#inheritText,
    );
    this.inheritBox.hidden = true;
    this.input.addEventListener('input', () => {
      if (this.valid()) void this.lookUp();
      else {
        this.#asked++;
        this.#hideInherit();
      }
    });
  }

  /** Whether the name matches the pattern; says so on the card when not. */
  valid(): boolean {
    const ok = NAME_RE.test(this.input.value);
    this.input.setAttribute('aria-invalid', ok ? 'false' : 'true');
    this.msg.textContent = ok ? '' : 'Client name: must match ^[a-z][a-z0-9_-]{0,31}$';
    return ok;
  }

  /** Whether the inherit box is shown (so Allow needs it ticked), and whether it is ticked. */
  inheritance(): { shown: boolean; ticked: boolean } {
    return { shown: !this.inheritBox.hidden, ticked: !this.inheritBox.hidden && this.#inheritInput.checked };
  }

  /** Asks the daemon what this name would be: refused, or what it inherits (the box then shows). */
  async lookUp(): Promise<void> {
    const mine = ++this.#asked;
    const name = this.input.value;
    this.#hideInherit();
    if (!NAME_RE.test(name)) return;
    const answer = await askName(name);
    if (mine !== this.#asked || answer === undefined) return;
    if (answer.refused !== undefined) this.msg.textContent = answer.refused;
    if (answer.inherits !== undefined) {
      this.#inheritText.textContent = `${answer.inherits.text}. Give this connection all of it`;
      guard.change(() => {
        this.inheritBox.hidden = false;
      });
    }
  }

  /** The box coming or going moves Allow: inert again for a second (click-safety.ts), as any move. */
  #hideInherit(): void {
    if (this.inheritBox.hidden) return;
    this.#inheritInput.checked = false;
    guard.change(() => {
      this.inheritBox.hidden = true;
    });
  }
}

/** The decision card: who asks (its own name and its client_id's host), where answers go, the name field. */
function consentCard(view: ConsentView, name: NameField, allow: HTMLElement, deny: HTMLElement): HTMLElement {
  const who =
    view.kind === 'cimd' && view.client_id_host !== undefined
      ? el('strong', { class: 'host' }, view.client_id_host)
      : el(
          'span',
          { class: 'unverified' },
          'none: it registered itself here, so nothing vouches for its name',
        );
  return el(
    'article',
    { class: 'card state-awaiting_review consent-card', 'aria-labelledby': 'consent-title', tabindex: '-1' },
    el('h2', { id: 'consent-title' }, 'An AI asks to connect to this daemon'),
    el(
      'dl',
      { class: 'consent-facts' },
      row('Calls itself', view.client_name ?? '(no name given)'),
      row('Web address (client_id host)', who),
      row('Answers go to', target(view)),
      row('Client ID', el('code', {}, view.client_id)),
    ),
    el('label', { for: 'client-name' }, 'Client name for this connection'),
    name.input,
    name.help,
    name.inheritBox,
    el(
      'p',
      { class: 'hint' },
      'Allow lets it list the tools and ask for commands as this client; every command still waits for your approval. You can disconnect it in the panel at any time.',
    ),
    el('div', { class: 'controls' }, allow, deny),
    name.msg,
  );
}

function render(view: ConsentView): void {
  const name = new NameField(view.suggested_name);
  const allow = el('button', { type: 'button', class: 'approve', 'data-action': 'allow' }, 'Allow');
  const deny = el('button', { type: 'button', class: 'deny', 'data-action': 'deny' }, 'Deny');
  const card = consentCard(view, name, allow, deny);
  const msg = name.msg;
  allow.addEventListener('click', () => {
    if (guard.isInert(card) || busy || !name.valid()) return;
    const inherit = name.inheritance();
    if (inherit.shown && !inherit.ticked) {
      msg.textContent = `Tick the box to give ${name.input.value} its history and grants, or choose another name.`;
      return;
    }
    void decide(view.id, card, 'allow', name.input.value, inherit.ticked);
  });
  deny.addEventListener('click', () => {
    if (guard.isInert(card) || busy) return;
    void decide(view.id, card, 'deny', '');
  });
  status.textContent = '';
  guard.change(() => slot.replaceChildren(card));
  void name.lookUp();
  // Back in view after being hidden: inert again, as every decision card (click-safety.ts).
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') guard.hold(card);
  });
  window.addEventListener('resize', () => guard.change(() => {}));
}

async function main(): Promise<void> {
  const id = requestId();
  if (id === undefined) {
    status.textContent = 'No connection request here. Start connecting from the AI again.';
    return;
  }
  // Kept until decided, so a reload or a login round trip finds it; out of the address bar.
  localStorage.setItem(PENDING_ITEM, JSON.stringify({ id, at: Date.now() }));
  if (location.hash !== '') history.replaceState(null, '', '/oauth/consent');
  let r: Response;
  try {
    r = await fetch(`/owner/oauth/consent/${id}`, {
      credentials: 'same-origin',
      headers: headers(),
      cache: 'no-store',
    });
  } catch {
    status.textContent = 'The daemon does not answer. Is it running?';
    return;
  }
  if (r.status === 401) {
    showLogin();
    return;
  }
  const body = (await r.json().catch(() => ({}))) as { consent?: ConsentView; error?: { message?: string } };
  if (!r.ok || body.consent === undefined) {
    localStorage.removeItem(PENDING_ITEM);
    status.textContent = body.error?.message ?? `Cannot show this request (HTTP ${r.status}).`;
    return;
  }
  render(body.consent);
}

void main();
