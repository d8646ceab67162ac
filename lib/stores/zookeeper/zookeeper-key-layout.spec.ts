import { isZookeeperConnectionOption } from './zookeeper-connection-option';
import { contenderShapeOf, decodeContenderValue, encodeNodeName, newNonce, sortContenders, ZookeeperKeyLayout, type ContenderShape } from './zookeeper-key-layout';

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

  it.each<ContenderShape>([
    { shape: 'plain', permits: 0 },
    { shape: 'read', permits: 0 },
    { shape: 'write', permits: 0 },
    { shape: 'permits', permits: 1 },
    { shape: 'permits', permits: 250 },
  ])('names a contender of %j so that its shape reads back, in the plain form earlier versions count as exclusive', (shape) => {
    const name = `${new ZookeeperKeyLayout('lock:').contenderPrefix('k', newNonce(shape)).split('/').pop()}0000000042`;
    // What an instance of an earlier version (plain locks only) takes for a contender: it waits for this one.
    expect(name).toMatch(/^lock-([0-9a-f]+)-(\d{10})$/);
    expect(contenderShapeOf(name)).toEqual(shape);
  });

  it('reads a contender of an earlier version, or with a tag it does not know, as plain: exclusive, it holds its place', () => {
    expect(contenderShapeOf('lock-0123456789ab-0000000001')).toEqual({ shape: 'plain', permits: 0 });
    expect(contenderShapeOf('lock-ff-0000000001')).toEqual({ shape: 'plain', permits: 0 });
    expect(contenderShapeOf('lock-0123456789ab9-0000000001')).toEqual({ shape: 'plain', permits: 0 });
    expect(contenderShapeOf('lock-0123456789ab30-0000000001')).toEqual({ shape: 'plain', permits: 0 });
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
