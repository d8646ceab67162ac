/**
 * What closing the PostgreSQL store needs when the server has stopped answering: a wait with a bound,
 * and a way to cut a connection without the goodbye (`end()` sends Terminate and waits for the socket to
 * close, which a dead peer never does).
 */

/** True when `pending` settled within `withinMs`, false when the time ran out first. */
export async function settlesWithin(pending: Promise<unknown>, withinMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), withinMs);
    timer.unref();
  });
  try {
    return await Promise.race([pending.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Destroys the socket of a node-postgres client (`pg.Client#connection.stream`): the client then ends at
 * once, failing whatever it still waits for. A client of another shape is left alone.
 */
export function destroySocket(client: unknown): void {
  (client as { connection?: { stream?: { destroy?: () => void } } } | null)?.connection?.stream?.destroy?.();
}
