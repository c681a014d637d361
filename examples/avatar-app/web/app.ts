/**
 * The avatar page: renders what the app's server says over `/events` (server-sent events): the session
 * UUID for the Bridge panel and the avatar's state. The server owns every decision (TTL, neutral,
 * messages); the page only draws, so two open tabs always agree.
 */

interface AvatarState {
  action: string;
  emotion: string;
  gaze: string;
  intensity: number;
  cue_id: string | null;
  cue_until: number | null;
  message: string | null;
  message_until: number | null;
}

interface Snapshot {
  session_id: string;
  instance_id: string;
  ready: boolean;
  bridge_url: string;
  server_time: number;
  state: AvatarState;
}

const ACTION_WORDS: Record<string, string> = {
  none: 'standing',
  wave: 'waving',
  nod: 'nodding',
  shake_head: 'shaking head',
  small_guts_pose: 'small guts pose',
  celebrate: 'celebrating',
};
const GAZE_WORDS: Record<string, string> = {
  neutral: 'looking ahead',
  user: 'looking at you',
  content: 'looking at the content',
  away: 'looking away',
};

function el<T extends Element = HTMLElement>(selector: string): T {
  const found = document.querySelector<T>(selector);
  if (!found) throw new Error(`missing ${selector}`);
  return found;
}

const avatar = el('[data-avatar]');
const bubble = el('[data-message]');
const caption = el('[data-caption]');
const ttlBar = el('[data-ttl-bar]');
const sessionEl = el('[data-session-id]');
const readyBox = el<HTMLInputElement>('[data-ready]');
const connDot = el('[data-conn]');
const connText = el('[data-conn-text]');
const copied = el('[data-copied]');
const bridgeUrl = el('[data-bridge-url]');
const lastCue = el('[data-last-cue]');
const aura = el<HTMLElement>('.aura');

let lastCueId: string | null = null;

function render(s: Snapshot): void {
  const st = s.state;
  avatar.dataset.action = st.action;
  avatar.dataset.emotion = st.emotion;
  avatar.dataset.gaze = st.gaze;
  avatar.dataset.intensity = String(st.intensity);
  avatar.style.setProperty('--i', String(st.intensity));
  aura.style.setProperty('--i', String(st.intensity));
  const atRest = st.cue_id === null;
  caption.textContent = atRest
    ? 'at rest'
    : `${ACTION_WORDS[st.action] ?? st.action} · ${st.emotion} · ${GAZE_WORDS[st.gaze] ?? st.gaze} · intensity ${st.intensity.toFixed(2)}`;
  if (st.message === null) {
    bubble.hidden = true;
    bubble.textContent = '';
  } else {
    bubble.textContent = st.message;
    bubble.hidden = false;
  }
  // The TTL bar runs down over what is left of the cue, on the server's clock.
  if (st.cue_until !== null && st.cue_id !== lastCueId) {
    const left = Math.max(0, st.cue_until - s.server_time);
    ttlBar.style.transition = 'none';
    ttlBar.style.width = '100%';
    void ttlBar.offsetWidth;
    ttlBar.style.transition = `width ${left}ms linear`;
    ttlBar.style.width = '0%';
  } else if (st.cue_until === null) {
    ttlBar.style.transition = 'none';
    ttlBar.style.width = '0%';
  }
  if (st.cue_id !== null) {
    lastCueId = st.cue_id;
    lastCue.textContent = st.cue_id;
  } else {
    lastCueId = null;
  }
  sessionEl.textContent = s.session_id;
  readyBox.checked = s.ready;
  bridgeUrl.textContent = s.bridge_url;
  connText.textContent = s.ready
    ? 'app running, ready for cues'
    : 'app running, not ready (cues are refused)';
}

function connect(): void {
  const events = new EventSource('/events');
  events.onopen = () => connDot.classList.add('on');
  events.onmessage = (e: MessageEvent<string>) => render(JSON.parse(e.data) as Snapshot);
  events.onerror = () => {
    connDot.classList.remove('on');
    connText.textContent = 'app not reachable, retrying…';
  };
}

el('[data-copy]').addEventListener('click', async () => {
  const text = sessionEl.textContent ?? '';
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Clipboard API refused (no permission): select the text so Ctrl+C works.
    const range = document.createRange();
    range.selectNodeContents(sessionEl);
    const sel = getSelection();
    sel?.removeAllRanges();
    sel?.addRange(range);
    copied.textContent = 'Selected — press Ctrl+C';
    return;
  }
  copied.textContent = 'Copied';
  setTimeout(() => {
    copied.textContent = '';
  }, 2000);
});

el('[data-rotate]').addEventListener('click', async () => {
  if (!confirm('Rotate the session ID? The AI will need the new one; the old one stops working at once.'))
    return;
  await fetch('/rotate', { method: 'POST' });
});

readyBox.addEventListener('change', async () => {
  await fetch(`/ready?value=${readyBox.checked}`, { method: 'POST' });
});

connect();
