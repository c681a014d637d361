/**
 * The Web Push and mail libraries, loaded when a daemon first sends (or makes its VAPID pair), not at every
 * start: with their JWT, ASN.1 and SMTP modules they were a fifth of a start, and a daemon with no push
 * device and no email channel never needs them.
 */
import { onFirstUse } from '../base/index.js';

export const webPush = onFirstUse(async () => (await import('web-push')).default);
export const nodemailer = onFirstUse(async () => (await import('nodemailer')).default);
