import { LockStoreUnavailableError } from '../../../errors/lock-store-unavailable.error.js';
import { NotSentError } from '../connection/redis-connection.js';
import type { RedisClient } from '../connection/redis-client.js';
import { isNoScript, type RedisScript } from '../scripts/define-script.js';

/** What a call needs from the commands that sent it. */
export interface CallTracker {
  readonly client: RedisClient;
  untrack(call: CommandCall): void;
  describe(error: unknown, routingKey?: string): Error;
}

/** What a script call needs to turn its reply into a result (`call` tells, e.g., the connection epoch it went out in). */
export type ReplyParser<T> = (reply: unknown, call: SentCommand) => T;

/** A command as its parser and clean-up see it. */
export interface SentCommand {
  readonly key: string;
  /** The script's keys and arguments, for a clean-up that needs them (the ownership token). */
  readonly args: readonly (string | number)[] | undefined;
  /** `RedisConnection.epoch` when it was sent. */
  readonly epoch: number;
  /** The reply as it comes (also after the command timed out), for a clean-up that wants to see it. */
  readonly reply: Promise<unknown>;
}

/**
 * One command in flight, in the list of those not answered yet (oldest first). Unlinked the moment it is
 * answered, so an answered command is garbage at once instead of waiting for a sweep.
 */
export class CommandCall implements SentCommand {
  prev?: CommandCall;
  next?: CommandCall;
  done = false;
  reply!: Promise<unknown>;
  /** Set for script calls: the script, sent by SHA first. */
  script?: RedisScript;
  numKeys = 0;
  args: (string | number)[] | undefined;
  parse?: ReplyParser<unknown>;
  /** Set for other commands: how to send it. */
  sender?: (client: RedisClient) => Promise<unknown>;
  fellBackToEval = false;

  constructor(
    readonly commands: CallTracker,
    /** `RedisCommands`' sweep count when it was sent: the sweeps count its time in flight. */
    readonly sentInSweep: number,
    readonly epoch: number,
    readonly operation: string,
    readonly key: string,
    readonly routingKey: string | undefined,
    readonly onUnknownOutcome: ((call: SentCommand) => void) | undefined,
    readonly resolve: (value: unknown) => void,
    readonly reject: (error: unknown) => void,
  ) {}

  /** A script call: sent by SHA, its reply turned into a result by `parse`. */
  useScript(script: RedisScript, numKeys: number, args: (string | number)[], parse: ReplyParser<unknown>): void {
    this.script = script;
    this.numKeys = numKeys;
    this.args = args;
    this.parse = parse;
  }

  send(client: RedisClient): Promise<unknown> {
    return this.script ? this.script.evalsha(client, this.numKeys, this.args!) : this.sender!(client);
  }

  listen(reply: Promise<unknown>): void {
    this.reply = reply;
    reply.then(
      (value) => this.answered(value),
      (error: unknown) => this.failed(error),
    );
  }

  answered(value: unknown): void {
    if (this.done) return;
    this.done = true;
    this.commands.untrack(this);
    if (!this.parse) {
      this.resolve(value);
      return;
    }
    try {
      this.resolve(this.parse(value, this));
    } catch (error) {
      this.reject(error);
    }
  }

  failed(error: unknown): void {
    if (this.done) return;
    // A server that has not seen the script yet (restarted, failed over, never asked): EVAL sends it
    // along, which both answers and caches it. Still the same call, under the same deadline.
    if (this.script && !this.fellBackToEval && isNoScript(error)) {
      this.fellBackToEval = true;
      this.listen(this.script.eval(this.commands.client, this.numKeys, this.args!));
      return;
    }
    this.done = true;
    this.commands.untrack(this);
    // A reply error means Redis answered (the script did not run); anything else may have run.
    if (!isReplyError(error) && !(error instanceof NotSentError)) this.onUnknownOutcome?.(this);
    this.reject(new LockStoreUnavailableError(this.operation, this.key, { cause: this.commands.describe(error, this.routingKey) }));
  }

  /** No answer by the deadline: the outcome is unknown. */
  expire(timeoutMs: number, server: string): void {
    this.done = true;
    this.onUnknownOutcome?.(this);
    const cause = new Error(`${server} did not answer within ${timeoutMs} ms`);
    this.reject(new LockStoreUnavailableError(this.operation, this.key, { cause }));
  }
}


export function isReplyError(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}
