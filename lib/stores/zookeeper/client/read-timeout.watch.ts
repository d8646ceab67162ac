import type { Socket } from 'node:net';
import { CONNECTION_STATE, type RawConnectionManager } from './node-zookeeper-client.types.js';

/** How often the socket's silence is looked at: well under the shortest bound (2/3 of a 1 s session). */
const CHECK_EVERY_MS = 100;

/**
 * The read timeout `node-zookeeper-client` lacks. On a member that stops answering (SIGSTOP, a frozen
 * VM, a link that drops packets) its socket stays open, its pings go unanswered, and it waits forever,
 * never trying another member, while the ensemble expires the session. As the Java client does: once
 * connected, no byte from the server for two thirds of the session timeout (the client pings after a
 * third of it idle) destroys the socket; during the handshake, no answer within the client's connect
 * timeout (the session timeout over the number of members) does the same. The client then reconnects to
 * the next member, and its session lives on there if the ensemble still has it. Returns the stop.
 */
export function watchReadTimeout(manager: RawConnectionManager): () => void {
  let socket: Socket | undefined;
  let heardAt = Date.now();
  const heard = (): void => {
    heardAt = Date.now();
  };
  const check = (): void => {
    if (manager.socket !== socket) {
      socket?.removeListener('data', heard);
      socket = manager.socket;
      socket?.on('data', heard);
      heard();
    }
    // While TCP connects, the client's own connect timer runs; the handshake is counted from its end.
    if (!socket || socket.destroyed || socket.connecting) return heard();
    const connected = manager.state === CONNECTION_STATE.CONNECTED || manager.state === CONNECTION_STATE.CONNECTED_READ_ONLY;
    const boundMs = connected ? Math.floor((manager.getSessionTimeout() * 2) / 3) : manager.connectTimeout;
    if (Date.now() - heardAt > boundMs) socket.destroy();
  };
  const timer = setInterval(check, CHECK_EVERY_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    socket?.removeListener('data', heard);
  };
}
