import { isNodeReply, nodeReplyOf, returnCodeOf, ZK, ZookeeperNodeError } from './zookeeper-reply';

/** node-zookeeper-client's `Exception`: a message such as `Exception: NO_NODE[-101]@/x`, and the code. */
function exception(name: string, code: number): Error {
  return Object.assign(new Error(`Exception: ${name}[${code}]@/x`), { code, name });
}

describe('ZooKeeper replies', () => {
  it("reads the return code of the client's Exception, and none from anything else", () => {
    expect(returnCodeOf(exception('NO_NODE', -101))).toBe(ZK.NONODE);
    expect(returnCodeOf(new Error('-101 no node'))).toBeUndefined();
    expect(returnCodeOf(undefined)).toBeUndefined();
    expect(returnCodeOf({ code: 'ECONNRESET' })).toBeUndefined();
  });

  it('tells node replies (part of the protocol) from failures of the call (an outage: unknown outcome)', () => {
    expect(isNodeReply(nodeReplyOf(exception('NODE_EXISTS', -110)), ZK.NODEEXISTS)).toBe(true);
    expect(isNodeReply(nodeReplyOf(exception('NOT_EMPTY', -111)), ZK.NOTEMPTY)).toBe(true);
    expect(isNodeReply(nodeReplyOf(exception('BAD_VERSION', -103)), ZK.BADVERSION)).toBe(true);
    expect(nodeReplyOf(exception('NO_NODE', -101))).toBeInstanceOf(ZookeeperNodeError);
    expect(nodeReplyOf(exception('CONNECTION_LOSS', -4))).toBeUndefined();
    expect(nodeReplyOf(exception('SESSION_EXPIRED', -112))).toBeUndefined();
    expect(nodeReplyOf(exception('OPERATION_TIMEOUT', -7))).toBeUndefined();
  });
});
