/**
 * Services the daemon notifies, played over loopback with their real protocols (contract 13.1): an HTTP
 * receiver that records every request a webhook sends (and can answer 5xx, or hang without answering), and
 * a real SMTP server (`smtp-server`) that records every mail. Slack, Discord, ntfy and an SMTP relay cannot
 * be reached from here; these speak the same HTTP and SMTP the real ones do.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** How the receiver answers: 200, a status of its choosing, or never (holds the request open). */
export type Answer = 'ok' | 'hang' | number;

export class HttpReceiver {
  readonly requests: Received[] = [];
  answer: Answer;
  /** Requests held open by `hang`, still unanswered. */
  readonly held = new Set<ServerResponse>();
  readonly #server: Server;

  private constructor(server: Server, answer: Answer) {
    this.#server = server;
    this.answer = answer;
  }

  static async start(answer: Answer = 'ok'): Promise<HttpReceiver> {
    const server = createServer();
    const r = new HttpReceiver(server, answer);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        r.requests.push({
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        if (r.answer === 'hang') {
          r.held.add(res);
          res.on('close', () => r.held.delete(res));
          return;
        }
        res.writeHead(r.answer === 'ok' ? 200 : r.answer, { 'Content-Type': 'text/plain' });
        res.end('thanks\n');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return r;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Requests whose JSON body has this `event` (json format). */
  json(): Array<Record<string, unknown>> {
    return this.requests.map((r) => JSON.parse(r.body) as Record<string, unknown>);
  }

  close(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

export interface Mail {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server on loopback (no TLS, no auth needed but accepted), recording each mail whole. */
export class SmtpReceiver {
  readonly mails: Mail[] = [];
  readonly logins: Array<{ username: string; password: string }> = [];
  readonly #server: SMTPServer;
  port = 0;

  private constructor(server: SMTPServer) {
    this.#server = server;
  }

  static async start(): Promise<SmtpReceiver> {
    let self: SmtpReceiver | undefined;
    const server = new SMTPServer({
      disabledCommands: ['STARTTLS'],
      authOptional: true,
      allowInsecureAuth: true,
      logger: false,
      onAuth(auth, _session, cb) {
        self!.logins.push({ username: auth.username ?? '', password: auth.password ?? '' });
        cb(null, { user: auth.username });
      },
      onData(stream, session, cb) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          self!.mails.push({
            from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          cb();
        });
      },
    });
    self = new SmtpReceiver(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    self.port = (server.server.address() as AddressInfo).port;
    return self;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
