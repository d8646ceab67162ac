/**
 * What closing the PostgreSQL store needs when the server has stopped answering, besides a bounded wait
 * (`settlesWithin`): a way to cut a connection without the goodbye (`end()` sends Terminate and waits for
 * the socket to close, which a dead peer never does).
 */

/**
 * Destroys the socket of a node-postgres client (`pg.Client#connection.stream`): the client then ends at
 * once, failing whatever it still waits for. A client of another shape is left alone.
 */
export function destroySocket(client: unknown): void {
  (client as { connection?: { stream?: { destroy?: () => void } } } | null)?.connection?.stream?.destroy?.();
}
