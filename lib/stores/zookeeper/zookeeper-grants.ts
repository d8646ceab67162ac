import type { ZookeeperSession } from './zookeeper-session.js';

/** One grant this process holds: its node, the session that is its lease, and its local deadline. */
export interface ZookeeperGrant {
  readonly key: string;
  /** The holder's ephemeral sequential node. */
  readonly path: string;
  /** The node's czxid: the fencing token. */
  readonly fencingToken: number;
  readonly holder: string;
  readonly session: ZookeeperSession;
  /** The lease length asked for (at most the session's timeout). */
  leaseMs: number;
  /** Local epoch ms: the lease ends here unless renewed (the holder's own deadline). */
  expiresAt: number;
}

/**
 * The grants of one store, by ownership token (which never goes to ZooKeeper: only this process knows
 * which node belongs to a token). Each grant has a local timer at its deadline: a live holder that was not
 * renewed by then deletes its node itself (as the ensemble would, a little later, had the process died).
 * A grant whose session ended is forgotten: its node went with the session.
 */
export class ZookeeperGrants {
  private readonly byToken = new Map<string, { grant: ZookeeperGrant; timer: NodeJS.Timeout; stop: () => void }>();

  constructor(private readonly expire: (grant: ZookeeperGrant) => void) {}

  remember(token: string, grant: ZookeeperGrant): void {
    const stop = grant.session.whenEnded(() => this.forget(token, grant));
    this.byToken.set(token, { grant, timer: this.timerFor(token, grant), stop });
  }

  get(key: string, token: string): ZookeeperGrant | undefined {
    const entry = this.byToken.get(token);
    return entry && entry.grant.key === key && !entry.grant.session.ended ? entry.grant : undefined;
  }

  /** Moves the grant's deadline (a renewal that got through): `expiresAt` is counted from the request's send time. */
  extend(token: string, grant: ZookeeperGrant, leaseMs: number, sentAt: number): void {
    const entry = this.byToken.get(token);
    if (entry?.grant !== grant) return;
    grant.leaseMs = leaseMs;
    grant.expiresAt = Math.max(grant.expiresAt, sentAt + leaseMs);
    clearTimeout(entry.timer);
    entry.timer = this.timerFor(token, grant);
  }

  forget(token: string, grant: ZookeeperGrant): void {
    const entry = this.byToken.get(token);
    if (entry?.grant !== grant) return;
    clearTimeout(entry.timer);
    entry.stop();
    this.byToken.delete(token);
  }

  clear(): void {
    for (const { timer, stop } of this.byToken.values()) {
      clearTimeout(timer);
      stop();
    }
    this.byToken.clear();
  }

  private timerFor(token: string, grant: ZookeeperGrant): NodeJS.Timeout {
    const timer = setTimeout(() => {
      if (this.byToken.get(token)?.grant !== grant) return;
      if (Date.now() < grant.expiresAt) return void this.extend(token, grant, grant.leaseMs, grant.expiresAt - grant.leaseMs);
      this.forget(token, grant);
      this.expire(grant);
    }, Math.max(0, grant.expiresAt - Date.now()));
    timer.unref();
    return timer;
  }
}
