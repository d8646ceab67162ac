import type { ZookeeperClient, ZookeeperStat, ZookeeperWatcher } from '../zookeeper-client.interface.js';
import type { RawClient, RawStat, RawWatcher } from './node-zookeeper-client.types.js';

/**
 * `node-zookeeper-client`'s callback API as the promises the store calls. Its `Exception` is passed on as
 * the rejection (its `code` is ZooKeeper's return code, read by `zookeeper-reply.ts`); a call the client
 * refuses synchronously (a bad path) rejects too. Stats come back with their 64-bit fields converted.
 */
export class ZookeeperClientAdapter implements ZookeeperClient {
  constructor(private readonly raw: RawClient) {}

  get sessionId(): string {
    return hexOf(this.raw.getSessionId());
  }

  get sessionTimeoutMs(): number {
    return this.raw.getSessionTimeout();
  }

  create(path: string, data: string, mode: number): Promise<string> {
    return settle((done) => this.raw.create(path, Buffer.from(data), mode, done));
  }

  async exists(path: string, watcher?: ZookeeperWatcher): Promise<ZookeeperStat | null> {
    const stat = await settle<RawStat | null>((done) => this.raw.exists(path, rawWatcher(watcher), done));
    return stat ? statOf(stat) : null;
  }

  getData(path: string, watcher?: ZookeeperWatcher): Promise<{ stat: ZookeeperStat; data: Buffer | undefined }> {
    return new Promise((resolve, reject) => {
      this.raw.getData(path, rawWatcher(watcher), (error, data, stat) => {
        if (error) return reject(error);
        try {
          resolve({ stat: statOf(stat), data });
        } catch (conversion) {
          reject(conversion);
        }
      });
    });
  }

  getChildren(path: string, watcher?: ZookeeperWatcher): Promise<string[]> {
    return settle((done) => this.raw.getChildren(path, rawWatcher(watcher), done));
  }

  async setData(path: string, data: string, version: number): Promise<ZookeeperStat> {
    return statOf(await settle<RawStat>((done) => this.raw.setData(path, Buffer.from(data), version, done)));
  }

  async remove(path: string, version: number): Promise<void> {
    await settle<void>((done) => this.raw.remove(path, version, (error) => done(error, undefined)));
  }
}

/** A 64-bit id (session, ephemeral owner) in hex without leading zeros: the two compare as strings. */
export function hexOf(long: Buffer): string {
  return long.readBigUInt64BE(0).toString(16);
}

/**
 * A jute `long` as a number, exactly: a zxid is `epoch << 32 | counter`, a safe integer until the
 * ensemble's 2^21st leader election. Past that a fencing token would be rounded (two grants could share
 * one), so the call fails instead.
 */
export function exactNumberOf(long: Buffer, field: string): number {
  const value = long.readBigInt64BE(0);
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`ZooKeeper ${field} ${value} is not a safe integer`);
  return Number(value);
}

export function statOf(stat: RawStat): ZookeeperStat {
  return { czxid: exactNumberOf(stat.czxid, 'czxid'), version: stat.version, ephemeralOwner: hexOf(stat.ephemeralOwner) };
}

function rawWatcher(watcher: ZookeeperWatcher | undefined): RawWatcher | undefined {
  return watcher && (() => watcher());
}

function settle<T>(send: (done: (error: Error | null, value: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    send((error, value) => (error ? reject(error) : resolve(value)));
  });
}
