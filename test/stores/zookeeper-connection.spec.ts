import { ZookeeperConnection } from '../../lib/stores/zookeeper/client/zookeeper-connection';
import { loadZookeeper } from '../../lib/stores/zookeeper/zookeeper.loader';
import { startZookeeperEnsemble, type ZookeeperEnsemble, type ZookeeperMember } from '../../scripts/servers/zookeeper-server';
import { pollUntil } from './zookeeper-test-support';

const SESSION_MS = 3_000;

/**
 * The gaps of `node-zookeeper-client` the store fills by hand (lib/stores/zookeeper/client/): it has no
 * read timeout (on a member that stops answering its socket stays open and it waits forever), and its
 * `close()` waits for the server's answer. A SIGSTOPped member answers nothing and keeps its connections.
 */
describe('ZooKeeper connection (node-zookeeper-client with a read timeout and a bounded close)', () => {
  let ensemble: ZookeeperEnsemble;
  beforeAll(async () => {
    ensemble = await startZookeeperEnsemble({ size: 3 });
  });
  afterAll(async () => {
    for (const member of ensemble?.members ?? []) member.resume();
    await ensemble?.stop();
  });

  /** The member serving the connection: the one holding the watch it just set on a path of its own. */
  async function memberOf(connection: ZookeeperConnection, path: string): Promise<ZookeeperMember> {
    await connection.client.create(path, '', 0).catch(() => undefined);
    await connection.client.exists(path, () => undefined);
    const sessionId = connection.client.sessionId;
    for (const member of ensemble.members) {
      // A paused member answers nothing (not even this command): it holds no watch of ours then.
      const watches = await member.watchesByPath().catch(() => new Map<string, string[]>());
      const sessions = watches.get(path) ?? [];
      if (sessions.some((session) => BigInt(session) === BigInt(`0x${sessionId}`))) return member;
    }
    throw new Error(`no member holds the watch of session ${sessionId}`);
  }

  /** A connection served by a follower (the client picks a member at random): pausing it leaves the quorum and its leader up. */
  async function onFollower(): Promise<{ connection: ZookeeperConnection; member: ZookeeperMember }> {
    for (let attempt = 0; ; attempt++) {
      const connection = await ZookeeperConnection.open(await loadZookeeper(), ensemble.connect, SESSION_MS, 5_000);
      const member = await memberOf(connection, `/paused-member-${attempt}`);
      if ((await member.mode()) === 'follower' || attempt >= 10) return { connection, member };
      await connection.close();
    }
  }

  it('leaves a member that stops answering for another before the session could expire, and keeps its session', async () => {
    const { connection, member: paused } = await onFollower();
    const sessionId = connection.client.sessionId;
    let ended = false;
    connection.whenEnded(() => (ended = true));
    paused.pause();
    try {
      const pausedAt = Date.now();
      // Without a read timeout this request would wait for the paused member forever.
      await pollUntil(async () => (await connection.client.exists('/').catch(() => 'retry')) !== 'retry', 'a request is answered');
      const movedAfterMs = Date.now() - pausedAt;
      expect(movedAfterMs).toBeLessThan(SESSION_MS);
      expect(connection.client.sessionId).toBe(sessionId);
      expect(ended).toBe(false);
      expect(await memberOf(connection, '/paused-member-moved')).not.toBe(paused);
    } finally {
      paused.resume();
      await connection.close();
    }
  });

  it('closes within about a second when no member answers, and leaves no socket open', async () => {
    const connection = await ZookeeperConnection.open(await loadZookeeper(), ensemble.connect, SESSION_MS, 5_000);
    for (const member of ensemble.members) member.pause();
    try {
      const started = Date.now();
      await connection.close();
      // A second for the server's answer, then the socket is destroyed (plus a loaded box's timer lag).
      expect(Date.now() - started).toBeLessThan(2_000);
      const { socket } = (connection as unknown as { raw: { connectionManager: { socket?: { destroyed: boolean } } } }).raw.connectionManager;
      expect(socket?.destroyed ?? true).toBe(true);
    } finally {
      for (const member of ensemble.members) member.resume();
    }
  });

  it('fails to open within its bound when nothing listens, and leaves nothing running', async () => {
    const started = Date.now();
    await expect(ZookeeperConnection.open(await loadZookeeper(), '127.0.0.1:1', SESSION_MS, 300)).rejects.toThrow('no session within 300 ms');
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
