import { globToRegExp } from '../stores/key-glob.js';
import type { ForceReleaseResult, HeldLock, LockStore, PrefixSurvey } from '../stores/lock-store.interface.js';
import { candidatesGlob, displayKey } from './key-display.js';

/** A held lock with the key as stored and as the user thinks of it (template segments decoded). */
export interface RunbookLock extends HeldLock {
  /** `key` with percent-encoded segments decoded: what the user wrote (`order:EU:42/ä`), terminal-safe. */
  readonly displayKey: string;
  /**
   * Which form of the key a glob matched: `'stored'`, or `'decoded'` only. A glob in the user's form
   * (`tenant:A:*`) also meets a key whose value contains the separator (`tenant:A%3Aevil:…`, decoded
   * `tenant:A:evil:…`), which may belong to another namespace: listings say so.
   */
  readonly matchedAs?: 'stored' | 'decoded';
}

/** What `forceRelease` did, with the typed key resolved to the stored one. */
export type RunbookForceRelease =
  | (ForceReleaseResult & { readonly key: string })
  | { readonly released: false; readonly reason: 'ambiguous'; readonly candidates: readonly RunbookLock[] };

/**
 * What an operator needs when a lock looks stuck, over any {@link LockStore}: which keys are held, by whom,
 * with which fencing token and TTL, and a deliberate force-release. Keys can be typed as stored or as the
 * user thinks of them (`inspect order:EU:42/ä` finds `order:EU%3A42%2F%C3%A4`).
 *
 * Force-releasing is dangerous: a key that looks stuck may belong to a holder that is still running (a
 * long GC pause, a partitioned pod). Stop or isolate that holder first, check its token and TTL and the
 * business data, and rely on fencing tokens at the resource for whatever it may still write. Pass the
 * fencing token you inspected to `forceRelease`, so that a holder that took over since is left alone.
 */
export class LockRunbook {
  constructor(private readonly store: LockStore) {}

  /** Held locks whose stored or decoded key matches `match` (`*` and `?` globs), by stored key. */
  async list(match = '*'): Promise<RunbookLock[]> {
    const pattern = globToRegExp(match);
    const held = await this.store.list(candidatesGlob(match));
    return held.flatMap((lock): RunbookLock[] => {
      const shown = withDisplayKey(lock);
      if (pattern.test(shown.key)) return [{ ...shown, matchedAs: 'stored' }];
      return pattern.test(shown.displayKey) ? [{ ...shown, matchedAs: 'decoded' }] : [];
    });
  }

  /**
   * Held locks under other key prefixes of the same store, when the store can tell (Redis: from a bounded
   * walk); undefined when it cannot. Counts only, for a listing that found nothing.
   */
  async heldUnderOtherPrefixes(): Promise<PrefixSurvey | undefined> {
    return this.store.heldUnderOtherPrefixes?.();
  }

  /** The lock at `key`, typed as stored or decoded; several when more than one stored key decodes to it. */
  async inspect(key: string): Promise<RunbookLock[]> {
    const exact = await this.store.inspect(key);
    if (exact) return [withDisplayKey(exact)];
    const candidates = await this.store.list(candidatesGlob(key));
    return candidates.map(withDisplayKey).filter((lock) => lock.displayKey === key);
  }

  /**
   * Deletes the key and wakes its waiters; with `fencingToken`, only while that grant still holds it.
   * A typed key that decodes from several stored keys is refused as ambiguous (type the stored form).
   */
  async forceRelease(key: string, fencingToken?: number): Promise<RunbookForceRelease> {
    const found = await this.inspect(key);
    if (found.length > 1) return { released: false, reason: 'ambiguous', candidates: found };
    const stored = found[0]?.key ?? key;
    return { ...(await this.store.forceRelease(stored, fencingToken)), key: stored };
  }
}

function withDisplayKey(lock: HeldLock): RunbookLock {
  return { ...lock, displayKey: displayKey(lock.key) };
}
