import { isZookeeperConnectionOption } from './zookeeper-connection-option';
import { decodeContenderValue, encodeNodeName, sortContenders, ZookeeperKeyLayout } from './zookeeper-key-layout';

describe('ZookeeperKeyLayout', () => {
  it('gives every key its own parent node whatever characters it holds, and reads the key back', () => {
    const layout = new ZookeeperKeyLayout('lock:');
    const keys = ['order:1', 'a/b', '.', '..', 'ü €', 'x%2Fy'];
    const names = keys.map((key) => layout.lockPath(key).split('/').pop()!);
    expect(new Set(names).size).toBe(keys.length);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9%_~!*'()-]+$/);
    expect(names.map((name) => layout.keyOf(name))).toEqual(keys);
    expect(layout.keyOf(encodeNodeName('other:order:1'))).toBeUndefined();
  });

  it('orders contenders by their sequence, not by their nonce, and skips nodes that are not contenders', () => {
    expect(sortContenders(['lock-ff-0000000010', 'lock-00-0000000002', 'stray', 'lock-aa-0000000009'])).toEqual([
      'lock-00-0000000002',
      'lock-aa-0000000009',
      'lock-ff-0000000010',
    ]);
  });

  it('reads a node written by something else as a holder of unknown name and length', () => {
    expect(decodeContenderValue(Buffer.from('not json'))).toEqual({ holder: '?', leaseMs: Number.NaN });
    expect(decodeContenderValue(Buffer.from('{"holder":"h","leaseMs":5}'))).toEqual({ holder: 'h', leaseMs: 5 });
  });

  it.each([
    ['127.0.0.1:2181', true],
    ['zk-0:2181,zk-1:2181,zk-2:2181/apps/orders', true],
    [['zk-0:2181', 'zk-1:2181'], true],
    ['zk-0', false],
    ['http://zk-0:2181', false],
    ['user:secret@zk-0:2181', false],
    ['zk-0:2181/', false],
    [[], false],
    [2181, false],
  ])('takes %j as a connection option: %s', (option, accepted) => {
    expect(isZookeeperConnectionOption(option)).toBe(accepted);
  });
});
