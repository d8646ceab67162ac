import { LockStoreUnavailableError } from '../../errors/lock-store-unavailable.error.js';
import type { CallOptions } from './txns/etcd-rpc.js';

/**
 * Runs one etcd request with the per-command timeout, and turns every failure into a
 * `LockStoreUnavailableError` that names the endpoints (host:port only) and the reason.
 */
export class EtcdCommands {
  constructor(
    /** `host:port,host:port`, from `describeEndpoints`: never credentials. */
    readonly endpoints: string,
    /** How long one request may take before its outcome counts as unknown. */
    readonly timeoutMs: number,
  ) {}

  /**
   * `send` gets call options with the gRPC deadline; a local timer enforces the same limit on whatever
   * etcd3 does before the call leaves (authentication, its retry and circuit-breaker policies). Without
   * an answer the request may still have run or still run: `onUnknownOutcome` undoes it (it must be safe
   * to run whether or not the request took effect).
   */
  run<T>(operation: string, key: string, send: (options: CallOptions) => Promise<T>, onUnknownOutcome?: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const fail = (reason: string): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        onUnknownOutcome?.();
        reject(this.unavailable(operation, key, reason));
      };
      const timer = setTimeout(() => fail(`no answer within ${this.timeoutMs} ms`), this.timeoutMs);
      timer.unref();
      let pending: Promise<T>;
      try {
        pending = send({ deadline: Date.now() + this.timeoutMs });
      } catch (error) {
        return fail(reasonOf(error));
      }
      pending.then(
        (value) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => fail(reasonOf(error)),
      );
    });
  }

  unavailable(operation: string, key: string, reason: string): LockStoreUnavailableError {
    return new LockStoreUnavailableError(operation, key, { cause: new Error(`etcd at ${this.endpoints}: ${reason}`) });
  }
}

/** gRPC's messages name the status and what went wrong; etcd3 prefixes its class name. Nothing secret. */
function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
