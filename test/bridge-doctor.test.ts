/**
 * `ogf-broker doctor` (contract 1.1): one line per check, a real `ogf-bridge/1` handshake with the configured
 * app (the reference avatar app, a silent port, an app that welcomes anyone), exit 0 only when all pass.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { CLI, exited, makeDataDir, ROOT, startDaemon, waitFor } from './helpers/daemon.js';

let app: ChildProcess;
let bridgeUrl: string;
const dirs: string[] = [];

function doctor(dataDir: string, config: Record<string, unknown>, args: string[] = []) {
  writeFileSync(join(dataDir, 'config.json'), JSON.stringify(config), { mode: 0o600 });
  const env = { ...process.env };
  delete env.OGF_BRIDGE_URL;
  delete env.OGF_BROKER_CONFIG;
  delete env.OGF_BROKER_PORT;
  const child = spawn(process.execPath, [CLI, 'doctor', '--data-dir', dataDir, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => {
    out += b.toString();
  });
  return exited(child).then((code) => {
    const lines = out.trim().split('\n');
    const line = (name: string) => lines.find((l) => l.slice(5).startsWith(`${name}:`)) ?? '';
    return { code, lines, line };
  });
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

function dataDir(): string {
  const d = makeDataDir('ogf-doctor-');
  dirs.push(d);
  return d;
}

beforeAll(async () => {
  app = spawn(process.execPath, [join(ROOT, 'dist', 'examples', 'avatar-app', 'main.js'), '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  app.stdout!.on('data', (b: Buffer) => {
    out += b.toString();
  });
  bridgeUrl = (await waitFor(() => /bridge (\S+)/.exec(out) ?? undefined, 'the avatar app'))[1]!;
});

afterAll(async () => {
  app.kill('SIGTERM');
  await exited(app);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('ogf-broker doctor', () => {
  it('all checks pass against the reference avatar app: exit 0, one line per check, the handshake proven', async () => {
    const port = await freePort();
    const r = await doctor(dataDir(), { ogf_bridge: { url: bridgeUrl } }, ['--port', String(port)]);
    expect(r.lines.map((l) => l.split(':')[0])).toEqual([
      'ok   config',
      'ok   config file',
      'ok   data dir',
      'ok   port',
      'ok   avatar app',
      'ok   node',
    ]);
    expect(r.line('avatar app')).toContain('SessionUnknown');
    expect(r.line('port')).toContain(`127.0.0.1:${port} is free`);
    expect(r.code).toBe(0);
  });

  it('says what is wrong: nothing listening, a group-readable data dir, a port another program holds', async () => {
    const dir = dataDir();
    chmodSync(dir, 0o750);
    const holder: Server = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const held = (holder.address() as AddressInfo).port;
    try {
      const silent = await freePort();
      const r = await doctor(dir, { ogf_bridge: { url: `ws://127.0.0.1:${silent}/ogf-bridge` } }, [
        '--port',
        String(held),
      ]);
      expect(r.code).toBe(1);
      expect(r.line('avatar app')).toMatch(/^FAIL avatar app: .*nothing is listening/);
      expect(r.line('data dir')).toMatch(/^FAIL data dir: .*chmod 700/);
      expect(r.line('port')).toMatch(new RegExp(`^FAIL port: 127.0.0.1:${held} is in use`));
      expect(r.line('config')).toMatch(/^ok {3}config/);
    } finally {
      holder.close();
    }
  });

  it('an app that welcomes a made-up session fails the check; a running daemon is reported as such', async () => {
    const server = createServer();
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) =>
      ws.on('message', () => ws.send(JSON.stringify({ type: 'welcome', instance_id: 'x', ready: true }))),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ogf-bridge`;
    const d = await startDaemon({ dataDir: dataDir() });
    try {
      const r = await doctor(d.dataDir, { ogf_bridge: { url } });
      expect(r.line('avatar app')).toMatch(/^FAIL avatar app: .*does not check session IDs/);
      expect(r.line('port')).toContain(`a daemon runs for this data dir: pid ${d.info.pid}`);
      expect(r.code).toBe(1);
    } finally {
      await d.stop();
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.close();
    }
  });
});
