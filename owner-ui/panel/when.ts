/**
 * How the panel writes a moment the daemon sent (an ISO timestamp): the owner's local time of day, or the
 * text itself if it is not a date. One place, so a card's "asked at" and "approved at" read alike.
 */
export function time(iso: string | undefined): string {
  if (iso === undefined) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString();
}

/** A moment days away, with its date: `12/13/2026, 2:10:04 PM` in the owner's locale. */
export function dateTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}
