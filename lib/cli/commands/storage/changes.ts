// `gantry storage changes`: the change log from a page token (Drive v2's changes.list, every page), and with --watch a
// push channel (changes.watch) whose notifications are received on --listen and printed, each `change` followed by
// the changes it announces, until Ctrl-C, SIGTERM or the reader going away — then channels.stop. A channel expires
// (an hour by default, --channel-lifetime / STORAGE_CHANNEL_LIFETIME to ask otherwise): a new one takes over before
// then (lib/storage/watch.ts keepWatchingChanges), and while none can be registered the change log is polled.
import type { Command } from 'commander';
import { shown } from '../../../errors.js';
import { isLoopbackHost } from '../../../loopback.js';
import type { Change, RenewingWatch, StorageClient, WatchEvent } from '../../../storage/index.js';
import { usage, type CliContext } from '../../context.js';
import type { Output } from '../../output.js';
import type { StorageFlags } from './client.js';
import { checkListen, checkNotifyAddress } from './input.js';
import { interruption, jsonLine, shortDate, StreamTable, withStorage } from './run.js';

interface ChangesFlags extends StorageFlags {
  pageToken?: string;
  watch?: boolean;
  listen?: string;
  address?: string;
  /** `--channel-lifetime`; else STORAGE_CHANNEL_LIFETIME. */
  channelLifetime?: string;
}

const maxLifetimeMs = 7 * 24 * 3600_000;

/**
 * How long each channel is asked to live: `90` or `90s`, `10m`, `2h`, `7d`; at least a second, at most the week the
 * service allows a changes channel. Undefined: ask nothing (the service's default, an hour).
 */
export function channelLifetimeMs(value: string | undefined, from: string): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const m = /^(\d{1,9})(s|m|h|d)?$/.exec(value.trim());
  const ms = m ? Number(m[1]) * { s: 1000, m: 60_000, h: 3600_000, d: 86_400_000 }[(m[2] ?? 's') as 's' | 'm' | 'h' | 'd'] : Number.NaN;
  if (!(ms >= 1000 && ms <= maxLifetimeMs)) {
    throw usage(
      `${from} ${shown(value.slice(0, 40))} is not a channel lifetime`,
      'give seconds (90 or 90s) or minutes, hours, days (10m, 2h, 7d): from 1s to 7d',
    );
  }
  return ms;
}

const changeColumns = [
  { header: 'change', value: (c: Change) => c.id, align: 'right' as const },
  { header: 'time', value: (c: Change) => shortDate(c.modificationDate) },
  { header: 'file id', value: (c: Change) => c.fileId },
  { header: 'title', value: (c: Change) => c.file?.title },
  { header: 'what', value: (c: Change) => (c.deleted ? 'removed' : c.file?.labels?.trashed ? 'trashed' : 'changed') },
];

/** Prints the changes from `pageToken` on (every page) and returns the token to ask with next time. */
async function printChanges(
  client: StorageClient,
  out: Output,
  json: boolean,
  table: StreamTable<Change>,
  pageToken: string | undefined,
  signal: AbortSignal,
): Promise<string | undefined> {
  const changes = client.changes.list.all({ ...(pageToken !== undefined ? { pageToken } : {}), maxResults: 1000, signal });
  let batch: Change[] = [];
  for await (const change of changes) {
    if (json) jsonLine(out, change);
    else batch.push(change);
    if (batch.length >= 100) {
      table.write(batch);
      batch = [];
    }
    if (signal.aborted) break;
  }
  table.write(batch);
  return changes.newStartPageToken;
}

export async function changesAction(flags: ChangesFlags, command: Command, context: CliContext): Promise<void> {
  const { json } = context.globals(command);
  const { out, logger } = context;
  if (flags.pageToken !== undefined && !/^[A-Za-z0-9_.~-]{1,512}$/.test(flags.pageToken)) {
    throw usage(
      `--page-token ${shown(flags.pageToken.slice(0, 80))} is not a page token`,
      'use the token an earlier `gantry storage changes` printed (its last line with --json)',
    );
  }
  if (!flags.watch && (flags.listen !== undefined || flags.address !== undefined || flags.channelLifetime !== undefined)) {
    throw usage(`${flags.listen !== undefined ? '--listen' : flags.address !== undefined ? '--address' : '--channel-lifetime'} goes with --watch`);
  }
  const lifetimeMs = flags.watch
    ? flags.channelLifetime !== undefined
      ? channelLifetimeMs(flags.channelLifetime, '--channel-lifetime')
      : channelLifetimeMs(process.env.STORAGE_CHANNEL_LIFETIME, 'STORAGE_CHANNEL_LIFETIME')
    : undefined;
  const listen = flags.listen !== undefined ? checkListen(flags.listen) : { host: '127.0.0.1', port: 0 };
  const address = flags.address !== undefined ? checkNotifyAddress(flags.address) : undefined;
  if (flags.watch && address === undefined && !isLoopbackHost(listen.host)) {
    throw usage(
      `--listen ${flags.listen}: notifications go over plain http only on loopback`,
      'give --address https://… (forwarded to the --listen address) for a service on another machine',
    );
  }
  await withStorage(flags, context, async ({ client }) => {
    const stop = interruption({ reader: true });
    const table = new StreamTable<Change>(out, changeColumns);
    const finish = (token: string | undefined) => {
      if (token === undefined) return;
      if (json) jsonLine(out, { kind: 'storage#startPageToken', startPageToken: token });
      else out.note(`Next: gantry storage changes --page-token ${token}`);
    };
    try {
      if (!flags.watch) {
        finish(await printChanges(client, out, json, table, flags.pageToken, stop.signal));
        if (!json && table.rows === 0) out.note('No changes.');
        return;
      }
      await watch(client, context, json, table, flags.pageToken, { listen, address, lifetimeMs }, stop.signal, finish);
    } catch (error) {
      if (!stop.reason()) throw error;
      logger.debug(`changes stopped: ${stop.reason()}`);
    } finally {
      // Ctrl-C is how a watch ends (exit 0); it cuts a listing short (130, SIGTERM 143). A reader gone is 0 either way.
      if (stop.reason()) process.exitCode = flags.watch ? 0 : stop.exitCode();
      stop.dispose();
    }
  });
}

async function watch(
  client: StorageClient,
  context: CliContext,
  json: boolean,
  table: StreamTable<Change>,
  given: string | undefined,
  where: { listen: { host: string; port: number }; address: string | undefined; lifetimeMs: number | undefined },
  signal: AbortSignal,
  finish: (token: string | undefined) => void,
): Promise<void> {
  const { out, logger } = context;
  const { listen, address, lifetimeMs } = where;
  const { createChannelReceiver } = await import('../../../storage/index.js');
  const { keepWatchingChanges } = await import('../../../storage/index.js');
  const receiver = createChannelReceiver({ logger });
  const stopReceiving = () => void receiver.close();
  signal.addEventListener('abort', stopReceiving, { once: true });
  // The token to go on from is printed only once the service has taken it (a refused --page-token is none), and the
  // receiver is closed however this ends: left listening, it would keep the process alive after an error.
  let token: string | undefined;
  let watching: RenewingWatch | undefined;
  // The one cursor: every read of the change log starts from `token` and moves it on, one read at a time (the loop
  // below awaits each), so a change announced by two channels, or by a channel and a poll, is printed once.
  const read = async () => {
    token = (await printChanges(client, out, json, table, token, signal)) ?? token;
  };
  try {
    let listening: string;
    try {
      listening = await receiver.listen({ host: listen.host, port: listen.port, path: '/notifications' });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
        throw usage(
          `--listen ${listen.host}:${listen.port}: cannot listen there (${code})`,
          code === 'EADDRINUSE' ? 'choose another port (0: any free port)' : 'use an address of this machine, e.g. 127.0.0.1:0',
        );
      }
      throw error;
    }
    // Without a token to start from, only what changes from now on; with one, first what changed since.
    if (given === undefined) token = (await client.changes.getStartPageToken({ signal })).startPageToken;
    else {
      try {
        token = (await printChanges(client, out, json, table, given, signal)) ?? given;
      } catch (error) {
        // Stopped while listing: what was printed may be printed again from the same token, never skipped.
        if (signal.aborted) token = given;
        throw error;
      }
    }
    watching = await keepWatchingChanges(client, {
      address: address ?? listening,
      receiver,
      logger,
      ...(lifetimeMs !== undefined ? { lifetimeMs } : {}),
      params: () => (token !== undefined ? { pageToken: token } : {}),
    });
    const first = watching.current;
    out.note(
      `Watching changes: channel ${first.id}${first.expiration ? ` until ${first.expiration.toISOString()} (a new channel takes over before then)` : ''}, notifications on ${listening}${address ? ` (the service posts to ${address})` : ''}. Ctrl-C stops.`,
    );
    for await (const event of watching.events()) {
      await onEvent(event, { out, logger, json, read });
      if (signal.aborted) break;
    }
  } finally {
    signal.removeEventListener('abort', stopReceiving);
    await receiver.close();
    if (watching) {
      const last = watching.current;
      try {
        await watching.stop();
        logger.info(`channel ${last.id} stopped`);
      } catch (error) {
        logger.warn(
          `the channel ${last.id} could not be stopped (${(error as Error).message}); it ends by itself${last.expiration ? ` at ${last.expiration.toISOString()}` : ''}`,
        );
      }
    }
    finish(token);
  }
}

const at = (date: Date | undefined) => (date ? ` at ${date.toISOString()}` : '');
const until = (date: Date | undefined) => (date ? ` until ${date.toISOString()}` : '');
const seconds = (ms: number) => `${Math.max(1, Math.round(ms / 1000))} s`;
const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * One event of the watch: a notification is printed (a `change` then read); a new channel taking over is a read too
 * (what only the replaced one announced was dropped); while no channel is registered, each attempt to register one
 * reads the change log — polling, at least once a minute, so that nothing is missed, only late.
 */
async function onEvent(event: WatchEvent, io: { out: Output; logger: CliContext['logger']; json: boolean; read: () => Promise<void> }): Promise<void> {
  const { out, logger, json, read } = io;
  switch (event.type) {
    case 'notification': {
      const notification = event.notification;
      if (json) jsonLine(out, { kind: 'gantry#notification', ...notification });
      else
        out.line(
          `notification ${notification.messageNumber}: ${notification.state}${notification.changed ? ` (${notification.changed.join(', ')})` : ''} at ${shortDate(notification.receivedAt.toISOString())}`,
        );
      if (notification.state === 'change') await read();
      return;
    }
    case 'renewed':
      if (event.afterExpiry)
        logger.warn(`watching again: channel ${event.channel.id}${until(event.channel.expiration)} took over from the expired ${event.previous.id}`);
      // Said where the first channel was: the notifications' numbers start again with each channel.
      else
        out.note(
          `Watching changes: channel ${event.channel.id}${until(event.channel.expiration)} took over from ${event.previous.id} (its notifications are numbered from 1 again)`,
        );
      await read();
      return;
    case 'renewalFailed':
      if (event.expired) {
        logger.warn(`still no channel (${reasonOf(event.error)}): reading the changes now, and trying to register one again in ${seconds(event.retryInMs)}`);
        await read();
      } else {
        logger.warn(
          `could not register a channel to take over from ${event.current.id} before it expires${at(event.current.expiration)} (${reasonOf(event.error)}); trying again in ${seconds(event.retryInMs)}`,
        );
      }
      return;
    case 'expired':
      logger.warn(
        `channel ${event.channel.id} expired${at(event.channel.expiration)} and no new one could be registered${event.error !== undefined ? ` (${reasonOf(event.error)})` : ''}: the service announces nothing until one is, so the changes are read at each attempt (at least once a minute) meanwhile`,
      );
      await read();
      return;
    case 'stopFailed':
      logger.warn(
        `the replaced channel ${event.channel.id} could not be stopped (${reasonOf(event.error)}); it ends by itself${at(event.channel.expiration)}, and what it still sends is ignored`,
      );
      return;
  }
}
