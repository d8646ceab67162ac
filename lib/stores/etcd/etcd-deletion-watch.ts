import type { Etcd3, Watcher } from 'etcd3';
import type { BackgroundTasks } from '../../support/background-tasks.js';
import type { KeyRange } from './txns/etcd-rpc.js';

/** A watch for deletions: of one key (a waiter's predecessor) or of any key in a range (release listeners). */
export interface DeletionWatch {
  /** Settles once etcd confirmed the watch; events from its start revision on are delivered after that. */
  readonly connected: Promise<void>;
  /** Settles if etcd cancels the watch (never on `cancel()`): no event comes through it after that. */
  readonly ended: Promise<void>;
  /** Stops the watch (idempotent). Cancelling talks to etcd; the store's close waits for it. */
  cancel(): void;
}

/**
 * Calls `onEvent` with the deleted key for every delete event in `range` from the moment etcd confirms
 * the watch (put events are filtered out by etcd itself, so a minimum-hold re-put or a lease move wakes
 * nobody). With `puts`, put events of the range are delivered too (a permit waiter's mark on its key
 * when it is granted, see the shaped queue). etcd3 keeps one watch stream per client for all of them and
 * resumes it from the last seen revision after a reconnect, so events are not lost to a failover; the
 * waiter's periodic re-check covers what a broken stream might still miss.
 */
export function watchDeletions(
  client: Etcd3,
  range: KeyRange | { key: Buffer },
  onEvent: (key: Buffer) => void,
  tasks: BackgroundTasks,
  { puts = false }: { readonly puts?: boolean } = {},
): DeletionWatch {
  let builder = puts ? client.watch() : client.watch().only('delete');
  builder = 'range_end' in range ? builder.inRange({ start: range.key, end: range.range_end }) : builder.key(range.key);
  const watcher: Watcher = builder.watcher();
  let cancelled = false;
  const connected = new Promise<void>((resolve) => watcher.once('connected', () => resolve()));
  const deliver = (kv: { key: Buffer }): void => {
    if (!cancelled) onEvent(kv.key);
  };
  watcher.on('delete', deliver);
  if (puts) watcher.on('put', deliver);
  // etcd3 emits 'error' on a watcher only when etcd cancelled it (say, its start revision was compacted):
  // it is dropped from the client's stream for good, and `ended` tells the owner to watch again. Listening
  // is also what keeps an 'error' event from being thrown.
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  watcher.on('error', () => {
    if (!cancelled) end();
  });
  return {
    connected,
    ended,
    cancel: () => {
      if (cancelled) return;
      cancelled = true;
      tasks.run(() => watcher.cancel());
    },
  };
}
