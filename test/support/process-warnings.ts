import { EventEmitter } from 'node:events';

/**
 * The warnings Node emits from now on (a MaxListenersExceededWarning, say), as `name: message`, until
 * `stop()`. Node emits them on the real process, and Jest gives each test file a copy of `process` whose
 * events are its own (waiting.spec.ts runs a child process for that reason): the real one is reached
 * through a function of Node's own realm, as `EventEmitter` is. A warning is emitted a tick after its
 * cause, so `stop()` waits for one.
 */
export function recordWarnings(): { stop(): Promise<string[]> } {
  const realProcess = (EventEmitter.constructor as FunctionConstructor)('return process')() as NodeJS.Process;
  const warnings: string[] = [];
  const record = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`);
  realProcess.on('warning', record);
  return {
    stop: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      realProcess.off('warning', record);
      return warnings;
    },
  };
}
