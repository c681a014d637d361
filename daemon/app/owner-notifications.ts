/**
 * Starts the owner notifications (contracts 13.1, 13.2, 14): the notification channels hear every
 * committed change and send in the background; links point at public_url when there is one (a phone reaches
 * the daemon through it), else at the daemon itself. The VAPID key pair is made at first start and kept; the
 * owners' devices come from the store. Every signed audit checkpoint goes out as a `checkpoint`
 * notification, so a copy of the chain's signed tip lives off this machine. Channels with `actions`
 * (contract 19) carry one-time Approve and Deny URLs, minted by the desk the owner edge spends them at.
 */
import { ActionDesk } from '../actions/index.js';
import type { Logger } from '../base/index.js';
import { type Config, ownsCommand } from '../config/index.js';
import type { BrokerApi, StorePorts } from '../core/index.js';
import type { DataDir } from '../datadir/index.js';
import { awaitsPreview, KINDS } from '../kinds/index.js';
import { loadVapidKeys, Notifier, type PublishedEvent, PushDevices } from '../notify/index.js';
import { unwritableAsync } from './unwritable.js';

export interface OwnerNotifications {
  readonly push: PushDevices;
  /** Contract 19 (v4): the one-time Approve and Deny the channels with `actions` carry. */
  readonly actions: ActionDesk;
  /** Sends an event raised elsewhere (`config`: app/config-loaded.ts) to the channels that asked for it. */
  publish(e: PublishedEvent): void;
  /** A reload's config (contract 17): its channels, and its upstreams' previews for the waiting notice. */
  reload(config: Config): void;
  close(): void;
}

export async function startOwnerNotifications(o: {
  config: Config;
  paths: DataDir;
  store: Pick<StorePorts, 'push' | 'audits' | 'actions'>;
  broker: BrokerApi;
  /** Contract 19: whether an owner by this name exists (a channel's `owner` that names nobody offers nothing). */
  tokens: { ownerCredential(name: string): unknown };
  baseUrl: () => string;
  env: NodeJS.ProcessEnv;
  log: Logger;
}): Promise<OwnerNotifications> {
  const { config, paths, store, log } = o;
  /** The config in force (a reload replaces it); where the daemon lives and its URL need a restart. */
  let now = config;
  const vapid = await unwritableAsync(config.dataDir, loadVapidKeys(paths.vapidJson));
  const push = new PushDevices({
    store: store.push,
    keys: vapid,
    subject: config.public_url ?? 'mailto:owner@ogf-broker.invalid',
    log,
  });
  await push.load();
  const actions = new ActionDesk({
    store: store.actions,
    baseUrl: o.baseUrl,
    isOwner: (name) => o.tokens.ownerCredential(name) !== undefined,
    log,
  });
  const notifier = new Notifier({
    push,
    actions,
    pushActions: config.push.actions,
    channels: config.notify,
    kinds: KINDS,
    awaitsPreview: (c) => awaitsPreview(now, c),
    baseUrl: o.baseUrl,
    env: o.env,
    log,
    statusPath: paths.notifyJson,
  });
  if (notifier.active) notifier.start(o.broker, (c) => ownsCommand(config, c));
  // The signature is public data: it proves, it grants nothing.
  const offCheckpoints = store.audits.onCheckpoint((cp) =>
    notifier.publish({
      event: 'checkpoint',
      title: `Audit checkpoint at entry ${cp.seq}`,
      summary: `The audit record up to entry ${cp.seq} is signed: hash ${cp.hash}, signature ${cp.signature}`,
      fields: { seq: cp.seq, hash: cp.hash, at: cp.at, signature: cp.signature },
    }),
  );
  return {
    push,
    actions,
    publish: (e) => notifier.publish(e),
    reload(next) {
      now = next;
      notifier.setChannels(next.notify, next.push.actions);
    },
    close() {
      offCheckpoints();
      notifier.close();
      actions.close();
    },
  };
}
