/**
 * Desktop notifications of new requests (issue 4): once per request, only after the first snapshot (a tab
 * that opens is not told about the whole queue), and only when the owner allowed them with the header's
 * button. Clicking one brings the tab forward on that card.
 */
import type { View } from '../../common/owner-messages.js';
import { escapeVisible } from '../../common/visible.js';

export class Notifier {
  readonly #notified = new Set<string>();
  readonly #show: (id: string) => void;
  /** Whether the first snapshot came: requests before it are the queue, not news. */
  synced = false;

  /** `show(id)`: put that card on screen and focus it (the owner asked for it). */
  constructor(show: (id: string) => void) {
    this.#show = show;
  }

  /** Tells the owner about `v` if it newly waits for a decision. */
  seen(v: View): void {
    if (this.#notified.has(v.id) || v.state !== 'awaiting_review') return;
    this.#notified.add(v.id);
    if (!this.synced) return;
    if ('Notification' in window && Notification.permission === 'granted') {
      // The system draws this text, not the panel: escape it here (issue 19), as `list` does (contract 5).
      const body = escapeVisible(`${v.client}: ${v.summary}`);
      const n = new Notification('Approval needed', { body, tag: v.id });
      n.onclick = () => {
        window.focus();
        this.#show(v.id);
      };
    }
  }

  /** The header's "Enable notifications" button: shown only while the browser would still ask. */
  setup(button: HTMLButtonElement): void {
    const show = () => {
      button.hidden = !('Notification' in window) || Notification.permission !== 'default';
    };
    show();
    button.addEventListener('click', () => {
      void Notification.requestPermission().then(show);
    });
  }
}
