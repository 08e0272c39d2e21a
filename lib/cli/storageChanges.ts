// `gantry storage changes`: the change log from a page token (Drive v2's changes.list, every page), and with --watch a
// push channel (changes.watch) whose notifications are received on --listen and printed, each `change` followed by
// the changes it announces, until Ctrl-C, SIGTERM or the reader going away — then channels.stop.
import type { Command } from 'commander';
import { shown } from '../errors.js';
import type { Change, StorageClient } from '../storage/index.js';
import { usage, type CliContext } from './context.js';
import type { Output } from './output.js';
import type { StorageFlags } from './storageClient.js';
import { checkListen, checkNotifyAddress } from './storageInput.js';
import { interruption, jsonLine, shortDate, StreamTable, withStorage } from './storageRun.js';

interface ChangesFlags extends StorageFlags {
  pageToken?: string;
  watch?: boolean;
  listen?: string;
  address?: string;
}

const changeColumns = [
  { header: 'change', value: (c: Change) => c.id, align: 'right' as const },
  { header: 'time', value: (c: Change) => shortDate(c.modificationDate) },
  { header: 'file id', value: (c: Change) => c.fileId },
  { header: 'title', value: (c: Change) => c.file?.title },
  { header: 'what', value: (c: Change) => (c.deleted ? 'removed' : c.file?.labels?.trashed ? 'trashed' : 'changed') },
];

/** Prints the changes from `pageToken` on (every page) and returns the token to ask with next time. */
async function printChanges(client: StorageClient, out: Output, json: boolean, table: StreamTable<Change>, pageToken: string | undefined, signal: AbortSignal): Promise<string | undefined> {
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
    throw usage(`--page-token ${shown(flags.pageToken.slice(0, 80))} is not a page token`, 'use the token an earlier `gantry storage changes` printed (its last line with --json)');
  }
  if (!flags.watch && (flags.listen !== undefined || flags.address !== undefined)) throw usage(`${flags.listen !== undefined ? '--listen' : '--address'} goes with --watch`);
  const listen = flags.listen !== undefined ? checkListen(flags.listen) : { host: '127.0.0.1', port: 0 };
  const address = flags.address !== undefined ? checkNotifyAddress(flags.address) : undefined;
  if (flags.watch && address === undefined && !['127.0.0.1', 'localhost', '::1'].includes(listen.host)) {
    throw usage(`--listen ${flags.listen}: notifications go over plain http only on loopback`, 'give --address https://… (forwarded to the --listen address) for a service on another machine');
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
      await watch(client, context, json, table, flags.pageToken, listen, address, stop.signal, finish);
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
  client: StorageClient, context: CliContext, json: boolean, table: StreamTable<Change>, given: string | undefined,
  listen: { host: string; port: number }, address: string | undefined, signal: AbortSignal, finish: (token: string | undefined) => void,
): Promise<void> {
  const { out, logger } = context;
  const { createChannelReceiver } = await import('../storage/index.js');
  const receiver = createChannelReceiver({ logger });
  const stopReceiving = () => void receiver.close();
  signal.addEventListener('abort', stopReceiving, { once: true });
  // The token to go on from is printed only once the service has taken it (a refused --page-token is none), and the
  // receiver is closed however this ends: left listening, it would keep the process alive after an error.
  let token: string | undefined;
  let registered: Awaited<ReturnType<StorageClient['watchChanges']>> | undefined;
  try {
    let listening: string;
    try {
      listening = await receiver.listen({ host: listen.host, port: listen.port, path: '/notifications' });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
        throw usage(`--listen ${listen.host}:${listen.port}: cannot listen there (${code})`, code === 'EADDRINUSE' ? 'choose another port (0: any free port)' : 'use an address of this machine, e.g. 127.0.0.1:0');
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
    registered = await client.watchChanges({ address: address ?? listening, receiver, ...(token !== undefined ? { params: { pageToken: token } } : {}) });
    out.note(`Watching changes: channel ${registered.id}${registered.expiration ? ` until ${registered.expiration.toISOString()}` : ''}, notifications on ${listening}${address ? ` (the service posts to ${address})` : ''}. Ctrl-C stops.`);
    for await (const notification of receiver.notifications()) {
      if (json) jsonLine(out, { kind: 'gantry#notification', ...notification });
      else out.line(`notification ${notification.messageNumber}: ${notification.state}${notification.changed ? ` (${notification.changed.join(', ')})` : ''} at ${shortDate(notification.receivedAt.toISOString())}`);
      if (notification.state === 'change') token = (await printChanges(client, out, json, table, token, signal)) ?? token;
      if (signal.aborted) break;
    }
  } finally {
    signal.removeEventListener('abort', stopReceiving);
    await receiver.close();
    if (registered) {
      try {
        await registered.stop();
        logger.info(`channel ${registered.id} stopped`);
      } catch (error) {
        logger.warn(`the channel ${registered.id} could not be stopped (${(error as Error).message}); it ends by itself${registered.expiration ? ` at ${registered.expiration.toISOString()}` : ''}`);
      }
    }
    finish(token);
  }
}
