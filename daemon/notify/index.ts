/**
 * Reaching the owner away from the panel (contracts.md 13.1, 13.2): the notifier the daemon starts (it
 * hears the broker's committed changes and sends through the configured channels in the background), its
 * `publish` seam for events raised elsewhere (the audit record's `checkpoint`, section 14), and the status
 * file `ogf-broker status` reads.
 */
export type { Attempt } from './attempt.js';
export { type ChannelCheck, checkChannels, testChannels } from './check.js';
export { cardUrl, type Message, type PublishedEvent } from './message.js';
export { Notifier, type NotifierOptions } from './notifier.js';
export { type PushDevice, PushDevices, type PushSubscriptionJson } from './push.js';
export { type ChannelStatus, describeChannel, readNotifyStatus } from './status.js';
export { loadVapidKeys, type VapidKeys } from './vapid.js';
