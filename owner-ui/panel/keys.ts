/**
 * Keyboard shortcuts of the owner panel (contracts.md 5, issue 4). Every shortcut stands for a card's own
 * button (`aria-keyshortcuts`) and goes through the same `act`, so click safety covers both.
 */
import { byId } from '../dom.js';

function visibleCards(): HTMLElement[] {
  return [...document.querySelectorAll<HTMLElement>('article.card')].filter((c) => !c.hidden);
}

/**
 * The panel's keyboard shortcuts (issue 4): j/k (or the arrows) move between cards, a approves, d denies
 * (with the note), n edits the note, Enter in a note sends it, Escape leaves it, ? shows help. `act` is
 * app.ts's, so a shortcut is refused exactly when its button is inert (contract 5 (v2)).
 */
export function shortcuts(act: (card: HTMLElement, action: string) => void): (e: KeyboardEvent) => void {
  return (e) => onKey(e, act);
}

function onKey(e: KeyboardEvent, act: (card: HTMLElement, action: string) => void): void {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const target = e.target as HTMLElement;
  // The Allow dialog has its own keys (arrows choose, Enter submits, Escape cancels).
  if (target.closest('dialog') !== null) return;
  const card = target.closest<HTMLElement>('article.card');
  if (target instanceof HTMLInputElement && target.type === 'text') {
    if (e.key === 'Enter' && card !== null) {
      e.preventDefault();
      act(card, target.classList.contains('note') ? 'deny' : 'reconcile');
    } else if (e.key === 'Escape' && card !== null) card.focus();
    return;
  }
  if (target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement) return;
  const list = visibleCards();
  const at = card === null ? -1 : list.indexOf(card);
  switch (e.key) {
    case 'j':
    case 'ArrowDown':
      list[Math.min(list.length - 1, at + 1)]?.focus();
      break;
    case 'k':
    case 'ArrowUp':
      list[Math.max(0, at - 1)]?.focus();
      break;
    case 'a':
      if (card !== null) act(card, 'approve');
      break;
    case 'd':
      if (card !== null) act(card, 'deny');
      break;
    case 'n':
      card?.querySelector<HTMLInputElement>('input.note, input.reconcile-note')?.focus();
      break;
    case '?':
      byId('shortcuts').toggleAttribute('hidden');
      break;
    default:
      return;
  }
  e.preventDefault();
}
