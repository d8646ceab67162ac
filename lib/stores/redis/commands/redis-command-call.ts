import type { Cluster, Redis } from 'ioredis';
import { LockStoreUnavailableError } from '../../../errors/lock-store-unavailable.error.js';
import type { RedisClient } from '../connection/redis-client.js';
import { NotSentError } from '../connection/redis-connection.js';
import type { LuaScript, RedisScript, SentScript } from '../scripts/redis-script.js';
import { acknowledgedReply, clusterRedirect, isNoScript, sendScript, type Acknowledgement } from './script-send.js';

/** What a call needs from the commands that sent it. */
export interface CallTracker {
  readonly client: RedisClient;
  /** The sweeps so far (see `RedisCommands`): a call remembers the count it was sent under. */
  readonly sweeps: number;
  /** `RedisConnection.epoch` now. */
  readonly epoch: number;
  untrack(call: CommandCall): void;
  describe(error: unknown, routingKey?: string): Error;
}

/** A command as a clean-up of it sees it. */
export interface SentCommand {
  readonly key: string;
  /** `RedisConnection.epoch` when it was sent. */
  readonly epoch: number;
  /** The reply as it comes (also after the command timed out), for a clean-up that wants to see it. */
  readonly reply: Promise<unknown>;
}

/** A script's result and how many replicas acknowledged its writes (`RedisCommands.runAcknowledged`). */
export interface Acknowledged<T> {
  readonly result: T;
  readonly acknowledged: number;
  /** Why WAIT failed after the script ran, described for the operator (its writes count as unacknowledged). */
  readonly waitRefused?: string;
}

/**
 * One command in flight, in the list of those not answered yet (oldest first). Unlinked the moment it is
 * answered, so an answered command is garbage at once instead of waiting for a sweep.
 *
 * A script call keeps its definition and its input (no closure: this is every acquisition's path); the
 * keys and arguments are built from them once, so a clean-up of a call that never got out still sees the
 * input, and the EVAL fallback sends the same array again.
 */
export class CommandCall implements SentCommand, SentScript<unknown> {
  prev?: CommandCall;
  next?: CommandCall;
  done = false;
  resolve!: (value: unknown) => void;
  reject!: (error: unknown) => void;
  /** `RedisCommands`' sweep count when it was sent: the sweeps count its time in flight. */
  readonly sentInSweep: number;
  readonly epoch: number;
  /** Script calls: the definition, its input, and what was made of them. */
  script: RedisScript<unknown, unknown> | undefined;
  input: unknown;
  private build: LuaScript | undefined;
  private numKeys = 0;
  private keysAndArgs: (string | number)[] | undefined;
  /** Set for acknowledged writes: WAIT follows the script (see `sendScript`). */
  private acknowledgement: Acknowledgement | undefined;
  private fellBackToEval = false;
  /** The redirects followed (`followRedirect`), the node the last one named, and whether ASKING goes first. */
  private redirects = 0;
  private node: RedisClient | undefined;
  private asking = false;
  /** Other commands: how to send it, and the Redis key it goes for. */
  private sender: ((client: RedisClient) => Promise<unknown>) | undefined;
  private routing: string | undefined;
  /** What the latest send returned (the EVAL fallback's, after one). */
  private sent!: Promise<unknown>;

  constructor(
    readonly commands: CallTracker,
    readonly operation: string,
    readonly key: string,
    readonly onUnknownOutcome: ((call: CommandCall) => void) | undefined,
  ) {
    this.sentInSweep = commands.sweeps;
    this.epoch = commands.epoch;
  }

  /** A script call: `script`'s build for the connection, with WAIT after it when `acknowledgement` is set. */
  useScript(script: RedisScript<unknown, unknown>, input: unknown, sharded: boolean, acknowledgement: Acknowledgement | undefined): this {
    this.script = script;
    this.input = input;
    this.build = sharded ? script.sharded : script.plain;
    const { numKeys } = script;
    this.numKeys = typeof numKeys === 'number' ? numKeys : numKeys(input);
    this.keysAndArgs = script.keysAndArgs(input);
    this.acknowledgement = acknowledgement;
    return this;
  }

  /** Any other command: `sender` sends it, for `routingKey`. */
  useSender(sender: (client: RedisClient) => Promise<unknown>, routingKey: string | undefined): this {
    this.sender = sender;
    this.routing = routingKey;
    return this;
  }

  /** The Redis key the call is sent for (a script's first key): it picks the Cluster node named in errors. */
  get routingKey(): string | undefined {
    return this.script ? (this.numKeys > 0 ? (this.keysAndArgs![0] as string) : undefined) : this.routing;
  }

  get ownershipToken(): string | undefined {
    return this.script?.ownershipToken?.(this.input);
  }

  get reply(): Promise<unknown> {
    return this.acknowledgement ? this.sent.then(scriptReply) : this.sent;
  }

  send(client: RedisClient): Promise<unknown> {
    if (!this.script) return this.sender!(client);
    return sendScript(this.node ?? client, this.build!, this.numKeys, this.keysAndArgs!, !this.fellBackToEval, this.acknowledgement, this.asking);
  }

  listen(sent: Promise<unknown>): void {
    this.sent = sent;
    sent.then(
      (value) => this.answered(value),
      (error: unknown) => this.failed(error),
    );
  }

  answered(value: unknown): void {
    if (this.done) return;
    let reply = value;
    let acknowledged = 0;
    let waitError: Error | undefined;
    if (this.acknowledgement) {
      // A pipeline answers with each command's outcome: the script's error fails the call (it did not run);
      // WAIT's is the caller's to handle, since the script's writes were made.
      try {
        ({ reply, acknowledged, waitError } = acknowledgedReply(value));
      } catch (error) {
        if (!this.followRedirect(error)) this.failed(error);
        return;
      }
    }
    this.done = true;
    this.commands.untrack(this);
    const { script } = this;
    if (!script) {
      this.resolve(value);
      return;
    }
    try {
      const result = script.parse(reply, this);
      if (!this.acknowledgement) this.resolve(result);
      else if (!waitError) this.resolve({ result, acknowledged });
      else this.resolve({ result, acknowledged, waitRefused: this.commands.describe(waitError, this.routingKey).message });
    } catch (error) {
      this.reject(error);
    }
  }

  failed(error: unknown): void {
    if (this.done) return;
    // A server that has not seen the script yet (restarted, failed over, never asked): EVAL sends it
    // along, which both answers and caches it. Still the same call, under the same deadline. The one
    // NOSCRIPT fallback of every script call, acknowledged ones included.
    if (this.script && !this.fellBackToEval && isNoScript(error)) {
      this.fellBackToEval = true;
      this.listen(this.send(this.commands.client));
      return;
    }
    this.done = true;
    this.commands.untrack(this);
    // A reply error means Redis answered (the script did not run); anything else may have run.
    if (!isReplyError(error) && !(error instanceof NotSentError)) this.onUnknownOutcome?.(this);
    this.reject(new LockStoreUnavailableError(this.operation, this.key, { cause: this.commands.describe(error, this.routingKey) }));
  }

  /**
   * An acknowledged write's MOVED, ASK or TRYAGAIN (see `clusterRedirect`), followed as ioredis follows a
   * plain command's, as many times as the client's `maxRedirections`: sent again to the node named, after
   * ASKING for ASK (MOVED also starts a refresh of the slot map, for the calls after this one), or to the
   * same node after `retryDelayOnTryAgain`. Still the same call, under the same deadline; the script did
   * not run where it was refused, so sending it again writes once. False when there is nothing to follow.
   */
  private followRedirect(error: unknown): boolean {
    const redirect = clusterRedirect(error);
    const { client } = this.commands;
    if (!redirect || !client.isCluster) return false;
    const cluster = client as Cluster;
    if (this.redirects >= (cluster.options.maxRedirections ?? 16)) return false;
    this.redirects += 1;
    if (redirect.kind === 'TRYAGAIN') {
      const again = setTimeout(() => {
        if (this.done) return;
        // The store closed meanwhile: the script was never sent again, so its outcome is known (not run).
        if (client.status === 'end') this.failed(new NotSentError('the connection closed before the call was sent again'));
        else this.listen(this.send(client));
      }, cluster.options.retryDelayOnTryAgain ?? 100);
      again.unref();
      return true;
    }
    if (redirect.kind === 'MOVED') cluster.refreshSlotsCache();
    const node = clusterNode(cluster, redirect.node);
    if (!node) return false;
    this.node = node;
    this.asking = redirect.kind === 'ASK';
    this.listen(this.send(client));
    return true;
  }

  /** No answer by the deadline: the outcome is unknown. */
  expire(timeoutMs: number, server: string): void {
    this.done = true;
    this.onUnknownOutcome?.(this);
    const cause = new Error(`${server} did not answer within ${timeoutMs} ms`);
    this.reject(new LockStoreUnavailableError(this.operation, this.key, { cause }));
  }
}

/** ioredis' private pool and NAT mapping, which it uses itself to follow a plain command's MOVED and ASK. */
interface ClusterPool {
  natMapper?(address: string): object;
  connectionPool?: { findOrCreate?(node: object): Redis };
}

/**
 * The client's connection to the node a redirect names, as ioredis finds it for its own redirects: through
 * `natMap`, and created when the pool has none yet (a node that only now takes slots, as when a cluster
 * grows). Without those internals (another ioredis), only a node already in the pool, by its address.
 */
function clusterNode(cluster: Cluster, address: string): Redis | undefined {
  const { natMapper, connectionPool } = cluster as unknown as ClusterPool;
  if (natMapper && connectionPool?.findOrCreate) return connectionPool.findOrCreate(natMapper.call(cluster, address));
  return cluster.nodes('all').find(({ options }) => `${options.host}:${options.port}` === address);
}

function scriptReply(results: unknown): unknown {
  return acknowledgedReply(results).reply;
}

export function isReplyError(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}
