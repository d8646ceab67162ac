import { parameterNames } from './method-parameter-names.js';

/* eslint-disable @typescript-eslint/no-unused-vars */
class Sample {
  async pay(orderId: string, amount: number) {}
  plain(a: number, b: number) {
    return a + b;
  }
  async defaults(a = '(,)', b = { x: [1, 2] }, c = `t${'}'}(`, d = (x: number) => x) {}
  async destructured({ id }: { id: string }, [first]: string[], ...rest: unknown[]) {}
  async commented(/* a, b */ orderId: string, // trailing
    amount: number) {}
  async *stream(topic: string) {}
  async ['computed' + 'Name'](value: string) {}
  async 'quoted (name)'(value: string) {}
  async none() {}
  async trailing(a: string, b: string,) {}
}

describe('parameterNames', () => {
  const of = (name: keyof Sample | string): (string | undefined)[] | undefined =>
    parameterNames((Sample.prototype as unknown as Record<string, (...args: never[]) => unknown>)[name]!);

  it('reads the names of a compiled class method', () => {
    expect(of('pay')).toEqual(['orderId', 'amount']);
    expect(of('plain')).toEqual(['a', 'b']);
    expect(of('none')).toEqual([]);
    expect(of('trailing')).toEqual(['a', 'b']);
  });

  it('is not confused by default values holding brackets, commas, strings, templates or arrows', () => {
    expect(of('defaults')).toEqual(['a', 'b', 'c', 'd']);
  });

  it('reports destructured parameters as unnamed and marks the rest parameter with its dots', () => {
    expect(of('destructured')).toEqual([undefined, undefined, '...rest']);
  });

  it('ignores comments, generator stars, computed and quoted method names', () => {
    expect(of('commented')).toEqual(['orderId', 'amount']);
    expect(of('stream')).toEqual(['topic']);
    expect(of('computedName')).toEqual(['value']);
    expect(of('quoted (name)')).toEqual(['value']);
  });

  it('reads plain functions and arrows', () => {
    expect(parameterNames(function named(x: number, y: number) {} as never)).toEqual(['x', 'y']);
    expect(parameterNames(((x: number) => x) as never)).toEqual(['x']);
    expect(parameterNames(eval('(async x => x)'))).toEqual(['x']);
  });

  it('returns undefined for functions without readable source', () => {
    expect(parameterNames(Sample.prototype.pay.bind(new Sample()) as never)).toBeUndefined();
    expect(parameterNames(Math.max as never)).toBeUndefined();
    expect(parameterNames(new Proxy(Sample.prototype.pay, {}) as never)).toBeUndefined();
  });
});
