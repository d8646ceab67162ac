import type { FaultKind, Injector } from './fault-kinds';
import type { FaultyProxy } from './faulty-proxy';
import { hold, lifted } from '../topology/topology';

/**
 * The proxy faults of one application's connections (`who`): its replies delayed (100–600 ms, from the
 * plan), dropped (and the connections cut when the stretch ends), or its connections cut and refused.
 */
export function proxyInjectors(proxies: readonly FaultyProxy[], who: string): Partial<Record<FaultKind, Injector>> {
  const during = async (mode: Parameters<FaultyProxy['set']>[0], ms: number): Promise<void> => {
    for (const proxy of proxies) proxy.set(mode);
    await hold(ms);
    for (const proxy of proxies) proxy.set({ kind: 'pass' });
  };
  return {
    'proxy-delay': async (fault) => {
      const ms = 100 + Math.round(fault.pick * 500);
      await during({ kind: 'delay', ms }, fault.durationMs);
      return lifted(who, `replies ${ms} ms late`);
    },
    'proxy-drop': async (fault) => {
      await during({ kind: 'drop' }, fault.durationMs);
      return lifted(who, 'replies dropped, connections cut');
    },
    'proxy-cut': async (fault) => {
      await during({ kind: 'cut' }, fault.durationMs);
      return lifted(who, 'connections cut and refused');
    },
  };
}
