import { isNodeReply, nodeReplyOf, returnCodeOf, ZK, ZookeeperNodeError } from './zookeeper-reply';

describe('ZooKeeper replies', () => {
  it('reads the return code of an answered call and of one the client refused to send', () => {
    expect(returnCodeOf(new Error('-101 no node'))).toBe(ZK.NONODE);
    expect(returnCodeOf(new Error('fn: "a_create" args: "/x" result: "ZINVALIDSTATE -9"'))).toBe(-9);
    expect(returnCodeOf(new Error('something else'))).toBeUndefined();
  });

  it('tells node replies (part of the protocol) from failures of the call (an outage: unknown outcome)', () => {
    expect(isNodeReply(nodeReplyOf(new Error('-110 node exists')), ZK.NODEEXISTS)).toBe(true);
    expect(nodeReplyOf(new Error('-101 no node'))).toBeInstanceOf(ZookeeperNodeError);
    expect(nodeReplyOf(new Error('-4 connection loss'))).toBeUndefined();
    expect(nodeReplyOf(new Error('-112 session expired'))).toBeUndefined();
  });
});
