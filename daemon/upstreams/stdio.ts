/**
 * The stdio transport to one upstream MCP server (contract 7): argv only, never a shell; the environment
 * reduced to PATH/HOME/LANG plus the upstream's `env`; its own process group, so stopping it reaches every
 * grandchild (`npx` → node → the server) and the daemon leaves no orphans; stderr into the daemon's log,
 * line by line, tagged with the upstream's name. Messages are newline-delimited JSON-RPC; a line that is not
 * (the SDK's ReadBuffer would skip it silently) or one larger than `maxMessageBytes` is logged and ends the
 * connection — an upstream that answers garbage is refused, and the daemon goes on.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { type Logger, mcpClientLoaded, withOwnerUmask } from '../base/index.js';
import { minimalEnv } from '../launch/index.js';

/** How long a stopped server may take to exit after SIGTERM before its group gets SIGKILL. */
export const STOP_GRACE_MS = 2000;

/** Longest stderr line kept in the log; the rest is cut (a server must not flood the log by one line). */
const STDERR_LINE_MAX = 2000;

export interface StdioSpec {
  name: string;
  /**
   * Contract 12 (v4): `preview` for the second instance a stdio upstream runs for previews; its log lines
   * (stderr, refusals) carry `instance: "preview"` so the owner can tell the two apart.
   */
  instance?: 'preview' | undefined;
  argv: readonly string[];
  env?: Record<string, string> | undefined;
  cwd?: string | undefined;
  maxMessageBytes: number;
  log: Logger;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** A client Transport over a child process we spawn ourselves (the SDK's own spawns no process group). */
export class StdioUpstreamTransport implements Transport {
  readonly #spec: StdioSpec;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #child: ChildProcess | undefined;
  #exited: Promise<void> | undefined;
  #closed = false;
  #stderrTail = '';
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(spec: StdioSpec) {
    this.#spec = spec;
  }

  /** The server's pid once spawned (its process group id too). */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  start(): Promise<void> {
    if (this.#child) throw new Error('StdioUpstreamTransport.start() called twice');
    const [file, ...args] = this.#spec.argv;
    return new Promise((resolve, reject) => {
      let child: ChildProcess;
      try {
        // The owner's umask, not the daemon's 077 (contract 1.1 (v4)): the files it writes are the owner's.
        child = withOwnerUmask(() =>
          spawn(file!, args, {
            env: minimalEnv(this.#spec.env),
            cwd: this.#spec.cwd,
            shell: false,
            detached: true,
            stdio: ['pipe', 'pipe', 'pipe'],
            windowsHide: true,
          }),
        );
      } catch (e) {
        reject(e as Error);
        return;
      }
      this.#child = child;
      this.#exited = new Promise((r) => child.once('close', () => r()));
      // 'error' before anything else: an unheard one would stop the daemon (ENOENT, EACCES, EMFILE).
      child.on('error', (e) => {
        if (child.pid === undefined) reject(e);
        else this.onerror?.(e);
      });
      if (!child.stdin || !child.stdout || !child.stderr) return;
      child.stdin.on('error', (e) => this.onerror?.(e));
      child.stdout.on('data', (chunk: Buffer) => this.#read(chunk));
      child.stderr.on('data', (chunk: Buffer) => this.#stderr(chunk));
      child.once('close', () => {
        this.#flushStderr();
        this.#closed = true;
        this.onclose?.();
      });
      child.once('spawn', () => resolve());
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (this.#closed || !stdin || stdin.destroyed) return Promise.reject(new Error('not connected'));
    return new Promise((resolve, reject) => {
      stdin.write(mcpClientLoaded().serializeMessage(message), (e) => (e ? reject(e) : resolve()));
    });
  }

  /** Stops the server's whole process group: SIGTERM, then SIGKILL after STOP_GRACE_MS. Idempotent. */
  async close(): Promise<void> {
    const child = this.#child;
    if (!child || child.pid === undefined) return;
    if (!this.#closed) {
      child.stdin?.end();
      signalGroup(child.pid, 'SIGTERM');
      const timer = setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), STOP_GRACE_MS);
      await this.#exited;
      clearTimeout(timer);
    }
    // A grandchild that outlived its parent still belongs to the group.
    signalGroup(child.pid, 'SIGKILL');
  }

  #read(chunk: Buffer): void {
    if (this.#refused) return;
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      this.#pending.push(chunk.subarray(start, nl));
      const line = Buffer.concat(this.#pending).toString('utf8').replace(/\r$/, '');
      this.#pending = [];
      this.#pendingBytes = 0;
      start = nl + 1;
      if (line.trim() === '') continue;
      let message: JSONRPCMessage;
      try {
        message = mcpClientLoaded().deserializeMessage(line);
      } catch {
        this.#refuse(`it wrote a line that is not a JSON-RPC message (${line.length} characters)`);
        return;
      }
      this.onmessage?.(message);
      if (this.#refused) return;
    }
    const rest = chunk.subarray(start);
    this.#pendingBytes += rest.length;
    if (this.#pendingBytes > this.#spec.maxMessageBytes) {
      this.#refuse(`it sent a message larger than ${this.#spec.maxMessageBytes} bytes`);
      return;
    }
    if (rest.length > 0) this.#pending.push(rest);
  }

  #refused = false;

  /** Validate at every edge (architecture.md rule 5): garbage ends this connection, never the daemon. */
  #refuse(why: string): void {
    this.#refused = true;
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#spec.log.log('warn', 'upstream_refused', { ...this.#tag(), why });
    this.onerror?.(new Error(why));
    void this.close();
  }

  /** Whose line it is: the upstream, and which of its instances when it is the preview one. */
  #tag(): { upstream: string; instance?: 'preview' } {
    return this.#spec.instance === undefined
      ? { upstream: this.#spec.name }
      : { upstream: this.#spec.name, instance: this.#spec.instance };
  }

  #stderr(chunk: Buffer): void {
    const text = this.#stderrTail + chunk.toString('utf8');
    const lines = text.split('\n');
    this.#stderrTail = lines.pop() ?? '';
    if (this.#stderrTail.length > STDERR_LINE_MAX) {
      this.#logLine(this.#stderrTail);
      this.#stderrTail = '';
    }
    for (const line of lines) this.#logLine(line);
  }

  #flushStderr(): void {
    if (this.#stderrTail !== '') this.#logLine(this.#stderrTail);
    this.#stderrTail = '';
  }

  #logLine(line: string): void {
    const text = line.replace(/\r$/, '');
    if (text === '') return;
    this.#spec.log.log('info', 'upstream_stderr', {
      ...this.#tag(),
      line: text.length > STDERR_LINE_MAX ? `${text.slice(0, STDERR_LINE_MAX)}…` : text,
    });
  }
}
