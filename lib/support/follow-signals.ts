/**
 * A signal that aborts as soon as any of `signals` does, with that one's reason; `stop` detaches it once
 * it is no longer needed (so a long-lived signal does not collect listeners). Node 20's `AbortSignal.any`
 * keeps its inputs' listeners until they are collected; this one lets go at `stop`.
 */
export function followSignals(...signals: AbortSignal[]): { signal: AbortSignal; stop: () => void; controller: AbortController } {
  const controller = new AbortController();
  const listeners: Array<[AbortSignal, () => void]> = [];
  const stop = (): void => {
    for (const [signal, listener] of listeners) signal.removeEventListener('abort', listener);
    listeners.length = 0;
  };
  for (const signal of signals) {
    if (signal.aborted) {
      controller.abort(signal.reason);
      break;
    }
    const listener = (): void => {
      controller.abort(signal.reason);
      stop();
    };
    signal.addEventListener('abort', listener, { once: true });
    listeners.push([signal, listener]);
  }
  if (controller.signal.aborted) stop();
  return { signal: controller.signal, stop, controller };
}
