/**
 * A small picture of the expression a cue asks the avatar for (issue 4: "cues shown in words and as a
 * small picture"): the emotion in the mouth and brows, the gaze in the pupils, the intensity in how far
 * the features go (and the blush), the action as marks around the head, the message in a speech bubble
 * and the TTL as a bar. The same values are listed in words beside it; this is a glance, not a render.
 */
import { svg } from '../dom.js';

export interface CueArgs {
  action: string;
  emotion: string;
  intensity: number;
  gaze: string;
  ttl_ms: number;
  message?: string | null;
}

/** Reads the cue fields from a View's args (validated by the daemon; defaults keep the picture drawable). */
export function cueArgs(args: Record<string, unknown>): CueArgs {
  const str = (v: unknown, d: string) => (typeof v === 'string' ? v : d);
  const num = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) ? v : d);
  const cue: CueArgs = {
    action: str(args.action, 'none'),
    emotion: str(args.emotion, 'neutral'),
    intensity: Math.min(1, Math.max(0, num(args.intensity, 0.5))),
    gaze: str(args.gaze, 'neutral'),
    ttl_ms: num(args.ttl_ms, 3000),
  };
  if (args.message === null || typeof args.message === 'string') cue.message = args.message;
  return cue;
}

const GAZE_WORDS: Record<string, string> = {
  neutral: 'straight ahead',
  user: 'at you',
  content: 'down at the content',
  away: 'away',
};
const ACTION_WORDS: Record<string, string> = {
  none: 'no gesture',
  wave: 'waves',
  nod: 'nods',
  shake_head: 'shakes its head',
  small_guts_pose: 'makes a small guts pose',
  celebrate: 'celebrates',
};

/** The cue in one sentence, for the picture's accessible name. */
export function describeCue(c: CueArgs): string {
  const message =
    c.message === undefined
      ? 'keeps any message'
      : c.message === null
        ? 'clears the message'
        : `says “${c.message}”`;
  return `Avatar looks ${c.emotion} (intensity ${c.intensity}), ${ACTION_WORDS[c.action] ?? c.action}, looks ${
    GAZE_WORDS[c.gaze] ?? c.gaze
  }, ${message}, for ${(c.ttl_ms / 1000).toFixed(1)} s`;
}

/** Words for one gaze / action value. */
export const gazeWords = (g: string) => GAZE_WORDS[g] ?? g;
export const actionWords = (a: string) => ACTION_WORDS[a] ?? a;

function mouth(emotion: string, k: number): SVGElement {
  // k in 0.3..1 scales how far the expression goes.
  const y = 78;
  const curve = (d: number) => `M42 ${y} Q60 ${y + d * k} 78 ${y}`;
  switch (emotion) {
    case 'happy':
    case 'proud':
      return svg('path', { d: curve(16), class: 'face-line' });
    case 'excited':
      return svg('path', { d: `M40 ${y - 2} Q60 ${y + 24 * k} 80 ${y - 2} Z`, class: 'face-fill' });
    case 'surprised':
      return svg('ellipse', { cx: 60, cy: y + 2, rx: 6 + 4 * k, ry: 8 + 6 * k, class: 'face-fill' });
    case 'curious':
      return svg('ellipse', { cx: 64, cy: y, rx: 5, ry: 4 + 2 * k, class: 'face-fill' });
    case 'sad':
      return svg('path', { d: `M44 ${y + 6} Q60 ${y + 6 - 14 * k} 76 ${y + 6}`, class: 'face-line' });
    case 'concerned':
      return svg('path', { d: `M44 ${y + 2} Q52 ${y - 5 * k} 60 ${y + 2} T76 ${y + 2}`, class: 'face-line' });
    default:
      return svg('path', { d: `M46 ${y} L74 ${y}`, class: 'face-line' });
  }
}

function brows(emotion: string, k: number): SVGElement {
  const lift = emotion === 'surprised' || emotion === 'excited' ? -6 * k : 0;
  const tilt = emotion === 'concerned' || emotion === 'sad' ? 5 * k : emotion === 'proud' ? -3 * k : 0;
  const curiousLift = emotion === 'curious' ? -6 * k : 0;
  return svg(
    'g',
    { class: 'face-line' },
    svg('path', { d: `M34 ${40 + lift + tilt} L50 ${40 + lift - tilt}` }),
    svg('path', { d: `M70 ${40 + lift - tilt + curiousLift} L86 ${40 + lift + tilt + curiousLift}` }),
  );
}

function eyes(gaze: string, emotion: string): SVGElement {
  const [dx, dy] =
    gaze === 'user' ? [0, 1] : gaze === 'content' ? [-3, 4] : gaze === 'away' ? [5, -3] : [0, 0];
  const closed = emotion === 'proud';
  const eye = (cx: number) =>
    closed
      ? svg('path', { d: `M${cx - 7} 54 Q${cx} 48 ${cx + 7} 54`, class: 'face-line' })
      : svg(
          'g',
          {},
          svg('circle', { cx, cy: 54, r: 8, class: 'face-eye' }),
          svg('circle', { cx: cx + dx, cy: 54 + dy, r: gaze === 'user' ? 4.5 : 3.5, class: 'face-fill' }),
        );
  return svg('g', {}, eye(42), eye(78));
}

function actionMarks(action: string): SVGElement {
  switch (action) {
    case 'wave':
      return svg(
        'g',
        { class: 'face-action' },
        svg('circle', { cx: 108, cy: 40, r: 7 }),
        svg('path', { d: 'M100 24 Q108 18 116 24 M98 18 Q108 10 118 18' }),
      );
    case 'nod':
      return svg('path', {
        class: 'face-action',
        d: 'M108 30 L108 70 M102 36 L108 28 L114 36 M102 64 L108 72 L114 64',
      });
    case 'shake_head':
      return svg('path', {
        class: 'face-action',
        d: 'M34 110 L86 110 M40 104 L32 110 L40 116 M80 104 L88 110 L80 116',
      });
    case 'small_guts_pose':
      return svg(
        'g',
        { class: 'face-action' },
        svg('rect', { x: 100, y: 60, width: 14, height: 12, rx: 3 }),
        svg('path', { d: 'M107 72 L107 90' }),
      );
    case 'celebrate':
      return svg(
        'g',
        { class: 'face-confetti' },
        svg('circle', { cx: 12, cy: 14, r: 3 }),
        svg('circle', { cx: 108, cy: 12, r: 3 }),
        svg('rect', { x: 20, y: 100, width: 5, height: 5 }),
        svg('rect', { x: 100, y: 98, width: 5, height: 5 }),
        svg('path', { d: 'M8 40 L16 34 M112 44 L104 36' }),
      );
    default:
      return svg('g', {});
  }
}

/** The picture: an SVG with `role="img"` and the cue in words as its accessible name. */
export function cueFace(c: CueArgs): SVGElement {
  const k = 0.3 + 0.7 * c.intensity;
  const label = describeCue(c);
  const bubble =
    typeof c.message === 'string' && c.message !== ''
      ? svg(
          'g',
          { class: 'face-bubble' },
          svg('rect', { x: 4, y: 122, width: 152, height: 22, rx: 6 }),
          svg('text', { x: 10, y: 137 }, c.message.length > 26 ? `${c.message.slice(0, 25)}…` : c.message),
        )
      : null;
  const ttlWidth = Math.max(4, Math.min(1, c.ttl_ms / 10_000) * 152);
  return svg(
    'svg',
    {
      viewBox: '0 0 160 156',
      width: 160,
      height: 156,
      role: 'img',
      'aria-label': label,
      class: `cue-face emotion-${c.emotion}`,
      'data-emotion': c.emotion,
      'data-action': c.action,
      'data-gaze': c.gaze,
    },
    svg('title', {}, label),
    svg('circle', { cx: 60, cy: 62, r: 44, class: 'face-head' }),
    svg('circle', {
      cx: 34,
      cy: 72,
      r: 6,
      class: 'face-blush',
      'fill-opacity': (0.15 + 0.6 * c.intensity).toFixed(2),
    }),
    svg('circle', {
      cx: 86,
      cy: 72,
      r: 6,
      class: 'face-blush',
      'fill-opacity': (0.15 + 0.6 * c.intensity).toFixed(2),
    }),
    brows(c.emotion, k),
    eyes(c.gaze, c.emotion),
    mouth(c.emotion, k),
    actionMarks(c.action),
    bubble,
    svg('rect', { x: 4, y: 150, width: ttlWidth.toFixed(1), height: 4, rx: 2, class: 'face-ttl' }),
  );
}
