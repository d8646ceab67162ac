import type { ZookeeperPackage } from '../../lib/stores/zookeeper/zookeeper.loader';

/** A request as the tap sees it on its way from the client: which call, on which path, with which data and version. */
export interface TappedRequest {
  readonly call: 'create' | 'setData' | 'getData' | 'getChildren' | 'remove';
  readonly path: string;
  /** The node's value (JSON the store wrote: `holder`, `leaseMs`); '' for a read or a delete. */
  readonly data: string;
  /** The expected version of a `setData` or `remove` (-1: any); undefined otherwise. */
  readonly version?: number;
  /** Whether a read sets a watch on the node. */
  readonly watch?: boolean;
}

/** A request stopped before it leaves the client: none of it reaches ZooKeeper until `send()`. */
export interface PausedRequest {
  /** Resolves with the request once the store sent it; it now waits here. */
  readonly reached: Promise<TappedRequest>;
  send(): void;
}

/** A reply held back on its way to the caller; the request reached ZooKeeper and took effect. */
export interface HeldReply {
  /** Resolves once ZooKeeper answered (the answer is what is held back). */
  readonly landed: Promise<void>;
  /** Lets the answer through, late: the caller may have given up on it by then. */
  deliver(): void;
}

/** How many requests that match were sent, and how many of their answers reached their caller. */
export interface RequestCount {
  readonly sent: number;
  readonly answered: number;
}

interface Counter {
  readonly matches: (request: TappedRequest) => boolean;
  sent: number;
  answered: number;
}

/** What the tap reads of node-zookeeper-client's own bookkeeping (1.1.3's names): its emitter per watched path. */
interface RawWatchers {
  readonly connectionManager: { readonly watcherManager: { readonly dataWatchers: Record<string, { listenerCount(event: string): number }> } };
}

/** A request that never leaves the client: its caller gets the error the client gives for a lost connection. */
export interface LostRequest {
  /** Resolves with the request once the store sent it (and its caller got the error). */
  readonly reached: Promise<TappedRequest>;
}

interface Stop {
  readonly matches: (request: TappedRequest) => boolean;
  readonly kind: 'before' | 'reply' | 'lost';
  readonly reached: (request: TappedRequest) => void;
  readonly gate: Promise<void>;
}

/** node-zookeeper-client's `Exception` for a request lost with its connection (`CONNECTION_LOSS`, -4). */
function connectionLoss(path: string): Error {
  return Object.assign(new Error(`Exception: CONNECTION_LOSS[-4]@${path}`), { name: 'Exception', code: -4 });
}

/**
 * Network-fault injection on the real `node-zookeeper-client` a store is built with (nothing about locks
 * is simulated): a chosen request (a create, a write, a read, a delete) is stopped before it leaves the
 * client, so a test can act between two requests of one call, or its reply is held back while the request
 * itself takes effect (an answer lost or late on its way back). Each stop serves the first request it
 * matches, once. Requests can be counted, and the client's own listeners per watched path read.
 */
export class ZookeeperTap {
  readonly zookeeper: ZookeeperPackage;
  private readonly stops: Stop[] = [];
  private readonly counters: Counter[] = [];
  private readonly clients: RawWatchers[] = [];

  constructor(real: ZookeeperPackage) {
    this.zookeeper = {
      createClient: (connect, options) => {
        const raw = real.createClient(connect, options);
        this.clients.push(raw as unknown as RawWatchers);
        const create = raw.create.bind(raw);
        const setData = raw.setData.bind(raw);
        const getData = raw.getData.bind(raw);
        const getChildren = raw.getChildren.bind(raw);
        const remove = raw.remove.bind(raw);
        raw.create = (path, data, mode, callback) =>
          this.pass({ call: 'create', path, data: data.toString() }, (reply) => create(path, data, mode, reply), callback);
        raw.setData = (path, data, version, callback) =>
          this.pass({ call: 'setData', path, data: data.toString(), version }, (reply) => setData(path, data, version, reply), callback);
        raw.getData = (path, watcher, callback) =>
          this.pass({ call: 'getData', path, data: '', watch: watcher !== undefined }, (reply) => getData(path, watcher, reply), callback);
        raw.getChildren = (path, watcher, callback) =>
          this.pass({ call: 'getChildren', path, data: '', watch: watcher !== undefined }, (reply) => getChildren(path, watcher, reply), callback);
        raw.remove = (path, version, callback) => this.pass({ call: 'remove', path, data: '', version }, (reply) => remove(path, version, reply), callback);
        return raw;
      },
    };
  }

  /** Stops the next request that `matches` before it is sent, until `send()`. */
  pauseBefore(matches: (request: TappedRequest) => boolean): PausedRequest {
    let send!: () => void;
    const gate = new Promise<void>((resolve) => (send = resolve));
    let reached!: (request: TappedRequest) => void;
    const paused = { reached: new Promise<TappedRequest>((resolve) => (reached = resolve)), send };
    this.stops.push({ matches, kind: 'before', reached, gate });
    return paused;
  }

  /** The next request that `matches` takes effect, but its answer reaches the caller only at `deliver()`. */
  holdReplyTo(matches: (request: TappedRequest) => boolean): HeldReply {
    let deliver!: () => void;
    const gate = new Promise<void>((resolve) => (deliver = resolve));
    let landed!: () => void;
    const held = { landed: new Promise<void>((resolve) => (landed = resolve)), deliver };
    this.stops.push({ matches, kind: 'reply', reached: () => landed(), gate });
    return held;
  }

  /** The next request that `matches` is lost: it never reaches ZooKeeper, and its caller hears the connection was lost. */
  lose(matches: (request: TappedRequest) => boolean): LostRequest {
    let reached!: (request: TappedRequest) => void;
    const lost = { reached: new Promise<TappedRequest>((resolve) => (reached = resolve)) };
    this.stops.push({ matches, kind: 'lost', reached, gate: Promise.resolve() });
    return lost;
  }

  /** Counts the requests that `matches` from now on: sent, and answered (counted once the caller has its answer). */
  count(matches: (request: TappedRequest) => boolean): RequestCount {
    const counter: Counter = { matches, sent: 0, answered: 0 };
    this.counters.push(counter);
    return counter;
  }

  /**
   * The listeners the clients of this tap keep for data watches on `path`: one for each `getData` that set
   * a watch on it, kept (with all it references) until the node changes or goes.
   */
  dataWatchersOf(path: string): number {
    return this.clients.reduce((sum, raw) => sum + (raw.connectionManager.watcherManager.dataWatchers[path]?.listenerCount('notification') ?? 0), 0);
  }

  private pass<A extends unknown[]>(request: TappedRequest, send: (reply: (...answer: A) => void) => void, caller: (...answer: A) => void): void {
    const counters = this.counters.filter((counter) => counter.matches(request));
    for (const counter of counters) counter.sent++;
    const callback = (...answer: A): void => {
      caller(...answer);
      for (const counter of counters) counter.answered++;
    };
    const at = this.stops.findIndex((stop) => stop.matches(request));
    if (at < 0) return send(callback);
    const [stop] = this.stops.splice(at, 1) as [Stop];
    if (stop.kind === 'lost') {
      process.nextTick(() => {
        (callback as unknown as (error: Error) => void)(connectionLoss(request.path));
        stop.reached(request);
      });
      return;
    }
    if (stop.kind === 'before') {
      stop.reached(request);
      void stop.gate.then(() => send(callback));
      return;
    }
    send((...answer) => {
      stop.reached(request);
      void stop.gate.then(() => callback(...answer));
    });
  }
}

/** A request that writes a node for `holder` (the value the store gives every contender; a lock's parent has none). */
export const writesFor =
  (holder: string, call: TappedRequest['call'] = 'create') =>
  (request: TappedRequest): boolean => {
    if (request.call !== call) return false;
    try {
      return (JSON.parse(request.data) as { holder?: string }).holder === holder;
    } catch {
      return false;
    }
  };

/** A read of the node at `path` that sets a watch on it (a waiter's, on the node it waits for). */
export const watches =
  (path: string) =>
  (request: TappedRequest): boolean =>
    request.call === 'getData' && request.watch === true && request.path === path;

/** A delete of the node at `path`. */
export const deletes =
  (path: string) =>
  (request: TappedRequest): boolean =>
    request.call === 'remove' && request.path === path;
