/**
 * An email channel (contract 13.1) through nodemailer: SMTP to the server the variable `smtp_url_from_env`
 * holds (`smtp://` or `smtps://user:pass@host:port`), read when sending and never logged. Accepted means the
 * server answered 250 to the message; the subject is the title, the text the summary, expiry and link.
 */
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { type EmailChannelConfig, isSmtpUrl } from '../config/index.js';
import { ATTEMPT_TIMEOUT_MS, type Attempt, errorCode } from './attempt.js';
import { nodemailer } from './libraries.js';
import type { Message } from './message.js';

export function mailText(m: Message): string {
  const lines = [m.summary, ''];
  if (m.expires !== undefined) lines.push(`Expires: ${m.expires}`);
  lines.push(`Open: ${m.url}`);
  // Contract 19 (v4): each link opens a page with one button; a mail scanner that follows it decides nothing.
  if (m.actions !== undefined) lines.push('', `Approve: ${m.actions.approve}`, `Deny: ${m.actions.deny}`);
  lines.push('', '-- ogf-broker');
  return `${lines.join('\n')}\n`;
}

export async function sendEmail(
  c: EmailChannelConfig,
  m: Message,
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
): Promise<Attempt> {
  const url = env[c.smtp_url_from_env];
  if (url === undefined || !isSmtpUrl(url)) return { ok: false, retry: false, error: 'env_missing' };
  const options: SMTPTransport.Options = {
    url,
    connectionTimeout: ATTEMPT_TIMEOUT_MS,
    greetingTimeout: ATTEMPT_TIMEOUT_MS,
    socketTimeout: ATTEMPT_TIMEOUT_MS,
    // The message is ours alone: nodemailer must not read files or URLs for it.
    disableFileAccess: true,
    disableUrlAccess: true,
  };
  const transport = (await nodemailer()).createTransport(options);
  const abort = () => transport.close();
  signal?.addEventListener('abort', abort, { once: true });
  const deadline = setTimeout(abort, ATTEMPT_TIMEOUT_MS * 3);
  try {
    const info = await transport.sendMail({ from: c.from, to: c.to, subject: m.title, text: mailText(m) });
    const code = Number(/^\d{3}/.exec(info.response ?? '')?.[0] ?? 0);
    if (code === 250 && (info.accepted?.length ?? 0) > 0) return { ok: true, status: 250 };
    return { ok: false, retry: code >= 400, status: code };
  } catch (e) {
    const status = (e as { responseCode?: unknown }).responseCode;
    if (typeof status === 'number') return { ok: false, retry: status >= 400, status };
    return { ok: false, retry: true, error: errorCode(e) };
  } finally {
    clearTimeout(deadline);
    signal?.removeEventListener('abort', abort);
    transport.close();
  }
}
