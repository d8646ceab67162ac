import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { lockEventChannelName } from './lock-event.channels.js';
import { LOCK_EVENT_NAMES, type LockContentionEvent } from './lock-event.types.js';
import { LockEvents } from './lock-events.js';

describe('LockEvents', () => {
  const payload: LockContentionEvent = { key: 'k', name: undefined, holderTtlMs: 5 };

  it('builds no payload when nobody listens, neither here nor on the diagnostics channel', () => {
    const build = jest.fn(() => payload);
    new LockEvents().emit('contention', build);
    expect(build).not.toHaveBeenCalled();
  });

  it('publishes every event on its own diagnostics channel, building the payload once for both kinds of subscriber', () => {
    const events = new LockEvents();
    const heard: unknown[] = [];
    const onChannel = (message: unknown): void => void heard.push(['channel', message]);
    subscribe('nestjs-distributed-lock:contention', onChannel);
    try {
      const build = jest.fn(() => payload);
      events.emit('contention', build);
      events.on('contention', (e) => heard.push(['listener', e]));
      events.emit('contention', build);
      expect(build).toHaveBeenCalledTimes(2);
      expect(heard).toEqual([
        ['channel', payload],
        ['channel', payload],
        ['listener', payload],
      ]);
    } finally {
      unsubscribe('nestjs-distributed-lock:contention', onChannel);
    }
  });

  it('names one channel per event under the package prefix', () => {
    expect(LOCK_EVENT_NAMES.map(lockEventChannelName)).toEqual([
      'nestjs-distributed-lock:acquired',
      'nestjs-distributed-lock:not-acquired',
      'nestjs-distributed-lock:store-unavailable',
      'nestjs-distributed-lock:released',
      'nestjs-distributed-lock:renewed',
      'nestjs-distributed-lock:renew-failed',
      'nestjs-distributed-lock:lost',
      'nestjs-distributed-lock:release-failed',
      'nestjs-distributed-lock:deferred',
      'nestjs-distributed-lock:contention',
    ]);
  });
});
