import { GrantChannel } from './grant-channel';

/** A subscriber whose SUBSCRIBE replies the test gives, one by one. */
function subscriber() {
  const pending: Array<{ resolve: (stop: () => void) => void; reject: (error: Error) => void }> = [];
  const stops: jest.Mock[] = [];
  const channel = {
    listen: () => new Promise<() => void>((resolve, reject) => pending.push({ resolve, reject })),
  };
  const confirm = (): jest.Mock => {
    const stop = jest.fn();
    stops.push(stop);
    pending.shift()!.resolve(stop);
    return stop;
  };
  const refuse = (): void => pending.shift()!.reject(new Error('NOPERM'));
  return { channel, confirm, refuse, pending };
}

describe('GrantChannel', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('keeps a later waiter subscribed when a waiter whose subscription failed leaves', async () => {
    const { channel, confirm, refuse, pending } = subscriber();
    const grants = new GrantChannel(channel, (tag) => `grants:${tag}`);
    const failed = grants.subscribe('{a}');
    refuse();
    await expect(failed.ready).rejects.toThrow('NOPERM');
    // The next waiter of the slot subscribes afresh and is confirmed.
    const later = grants.subscribe('{a}');
    expect(pending).toHaveLength(1);
    const stop = confirm();
    await later.ready;
    // The failed waiter leaves (its wait ends): the later one still waits, so the channel stays.
    failed.unsubscribe();
    jest.advanceTimersByTime(10 * 60_000);
    expect(stop).not.toHaveBeenCalled();
    later.unsubscribe();
    jest.advanceTimersByTime(10 * 60_000);
    expect(stop).toHaveBeenCalledTimes(1);
  });

  it('counts each waiter once, however often it leaves', async () => {
    const { channel, confirm } = subscriber();
    const grants = new GrantChannel(channel, (tag) => `grants:${tag}`);
    const first = grants.subscribe('{a}');
    const second = grants.subscribe('{a}');
    const stop = confirm();
    await Promise.all([first.ready, second.ready]);
    first.unsubscribe();
    first.unsubscribe();
    jest.advanceTimersByTime(10 * 60_000);
    expect(stop).not.toHaveBeenCalled();
    second.unsubscribe();
    jest.advanceTimersByTime(10 * 60_000);
    expect(stop).toHaveBeenCalledTimes(1);
  });

  it('unsubscribes a slot whose last waiter left before the subscription was confirmed, after the linger', async () => {
    const { channel, confirm } = subscriber();
    const grants = new GrantChannel(channel, (tag) => `grants:${tag}`);
    const gone = grants.subscribe('{a}');
    gone.unsubscribe();
    const stop = confirm();
    await gone.ready;
    expect(stop).not.toHaveBeenCalled();
    jest.advanceTimersByTime(10 * 60_000);
    expect(stop).toHaveBeenCalledTimes(1);
  });
});
