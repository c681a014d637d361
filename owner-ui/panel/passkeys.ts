/**
 * The panel's Passkeys area (contract 13.3): the signed-in owner's passkeys (`passkey_list`), "Add a passkey"
 * (`passkey_begin` → the browser's authenticator → `passkey_finish`) and "Remove passkey …" on each. A
 * session signed in with the token can add the first passkey only; once the owner has one, adding and
 * removing need a session signed in with a passkey (the daemon refuses otherwise, and the area says so).
 */
import type { PasskeyInfo, ServerMessage } from '../../common/owner-messages.js';
import { byId, el, setText } from '../dom.js';
import { type CreationOptions, webauthn, webauthnTrouble } from '../webauthn.js';

type Send = (frame: Record<string, unknown>) => boolean;

export class PasskeyArea {
  readonly #list = byId('passkeys-list');
  readonly #status = byId('passkeys-status');
  readonly #add = byId<HTMLButtonElement>('passkey-add');
  readonly #send: Send;
  #next = 1;
  #mine: PasskeyInfo[] = [];
  #signedInWith: 'token' | 'passkey' | undefined;
  /** What the last add or remove came to, said once with the list that follows it. */
  #note = '';
  /** Requests of this area in flight, by req_id. */
  readonly #asked = new Map<string, string>();

  constructor(send: Send) {
    this.#send = send;
    this.#add.addEventListener('click', () => this.#begin());
    this.#list.addEventListener('click', (e) => {
      const b = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-remove]');
      if (b !== null) this.#ask('passkey_remove', { credential_id: b.dataset.remove });
    });
  }

  /** The socket is live (hello): how this session signed in, then the list. */
  live(signedInWith: 'token' | 'passkey' | undefined): void {
    this.#signedInWith = signedInWith;
    this.#asked.clear();
    this.#ask('passkey_list', {});
  }

  /** Handles a message of this area; false when it is not one. */
  receive(m: ServerMessage): boolean {
    if (m.type === 'passkey_list' && this.#asked.delete(m.req_id)) {
      this.#mine = m.passkeys;
      this.#render();
      return true;
    }
    if (m.type === 'passkey_begin' && this.#asked.delete(m.req_id)) {
      void this.#create(m.options as unknown as CreationOptions);
      return true;
    }
    if (m.type === 'reply' && m.req_id !== null && this.#asked.has(m.req_id)) {
      const what = this.#asked.get(m.req_id);
      this.#asked.delete(m.req_id);
      if (m.ok) this.#note = what === 'passkey_finish' ? 'Passkey added.' : 'Passkey removed.';
      else this.#note = `${m.error.code}: ${m.error.message}`;
      this.#add.disabled = false;
      this.#ask('passkey_list', {});
      return true;
    }
    return false;
  }

  #ask(type: string, frame: Record<string, unknown>): void {
    const req_id = `k${this.#next++}`;
    if (this.#send({ type, req_id, ...frame })) this.#asked.set(req_id, type);
    else this.#say('Not connected: wait for the panel to reconnect, then try again.');
  }

  #begin(): void {
    if (webauthn() === undefined) {
      this.#say('This browser cannot use passkeys here.');
      return;
    }
    this.#add.disabled = true;
    this.#say('Asking the daemon…');
    this.#ask('passkey_begin', {});
  }

  async #create(options: CreationOptions): Promise<void> {
    this.#say('Follow your device’s prompt (fingerprint, face or PIN)…');
    try {
      const response = await webauthn()!.startRegistration({ optionsJSON: options });
      this.#ask('passkey_finish', { response });
    } catch (e) {
      this.#say(webauthnTrouble(e));
      this.#add.disabled = false;
    }
  }

  #say(text: string): void {
    setText(this.#status, text);
  }

  #render(): void {
    this.#list.replaceChildren(
      ...this.#mine.map((p) =>
        el(
          'li',
          { class: 'passkey' },
          el('span', { class: 'passkey-id' }, `Passkey ${p.credential_id.slice(0, 10)}…`),
          el(
            'span',
            { class: 'passkey-when' },
            `${p.rp_id} · added ${new Date(p.created_at).toLocaleString()}`,
            p.last_used_at === undefined ? '' : ` · last used ${new Date(p.last_used_at).toLocaleString()}`,
          ),
          el(
            'button',
            {
              type: 'button',
              class: 'quiet',
              'data-remove': p.credential_id,
              'aria-label': `Remove passkey ${p.credential_id.slice(0, 10)}`,
            },
            'Remove',
          ),
        ),
      ),
    );
    const count = this.#mine.length;
    const note = this.#note === '' ? '' : /[.!?]$/.test(this.#note) ? `${this.#note} ` : `${this.#note}. `;
    this.#note = '';
    if (count === 0)
      this.#say(
        `${note}No passkey yet. Add one: commands that require a passkey can then be approved with your fingerprint, face or PIN.`,
      );
    else if (this.#signedInWith === 'token')
      this.#say(
        `${note}${count} passkey${count === 1 ? '' : 's'}. To add or remove one, sign in with a passkey (the token login cannot).`,
      );
    else this.#say(`${note}${count} passkey${count === 1 ? '' : 's'}.`);
  }
}
