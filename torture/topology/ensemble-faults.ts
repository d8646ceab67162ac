import type { FaultKind, Injector } from '../faults/fault-kinds';
import { choose, hold, lifted } from './topology';

/** One member of a consensus ensemble (an etcd member, a ZooKeeper server), as the faults reach it. */
export interface EnsembleMember {
  /** How the fault names it: `etcd:m2`, `zookeeper:3`. */
  readonly target: string;
  /** SIGKILL; resolves once the process is gone. Its data dir stays. */
  kill(): Promise<void>;
  /** Starts it again with its data; resolves once it serves. */
  start(): Promise<void>;
  pause(): void;
  resume(): void;
}

/** A server process of a test ensemble (scripts/servers), named for the faults. */
export function ensembleMember(target: string, member: Omit<EnsembleMember, 'target'>): EnsembleMember {
  return { target, kill: () => member.kill(), start: () => member.start(), pause: () => member.pause(), resume: () => member.resume() };
}

/**
 * The member faults of a consensus ensemble: one member paused, one killed and restarted with its data,
 * and the leader killed and restarted. A restart comes back within 1.5 s of the kill, whatever the fault
 * asked, so that the quorum (two of three) is lost only when another fault overlaps.
 */
export function ensembleInjectors(members: readonly EnsembleMember[], leader: () => Promise<EnsembleMember>): Partial<Record<FaultKind, Injector>> {
  const restart = async (member: EnsembleMember, durationMs: number, detail: string) => {
    await member.kill();
    await hold(Math.min(durationMs, 1_500));
    const end = Date.now();
    await member.start();
    return { target: member.target, end, recovered: Date.now(), detail };
  };
  return {
    'server-pause': async (fault) => {
      const member = choose(members, fault.pick);
      member.pause();
      await hold(fault.durationMs);
      member.resume();
      return lifted(member.target);
    },
    'server-restart': (fault) => restart(choose(members, fault.pick), fault.durationMs, 'SIGKILL, restarted with its data'),
    'leader-kill': async (fault) => restart(await leader(), fault.durationMs, 'leader SIGKILL, restarted with its data'),
  };
}
