import type { InstanceCluster, Instance } from './instance-cluster.js';
import { DRILL_ORDER } from './seed-orders.js';

export interface PauseDrillResult {
  readonly pausedInstance: string;
  readonly pausedFencingToken: number;
  readonly takeoverInstance: string;
  readonly takeoverStatus: number;
  readonly takeoverFencingToken: number | undefined;
  readonly pausedForMs: number;
  readonly lateWriteStatus: number;
  /** The error code of the late write's answer: STALE_FENCING_TOKEN when the database refused it. */
  readonly lateWriteCode: string | undefined;
  readonly lateWriteBody: string;
}

interface HoldingMessage {
  type: 'holding';
  orderId: string;
  fencingToken: number;
}

/**
 * The seeds' drill "holder paused past its lease": instance A takes the order's lock and stalls inside it;
 * at that moment we SIGSTOP it, longer than its lease. Instance B then gets the lock and pays. When A
 * resumes it carries on and writes with its old fencing token, and the database refuses that write (the
 * fenced update's StaleFencingTokenError, answered 409 STALE_FENCING_TOKEN).
 */
export async function runPauseDrill(cluster: InstanceCluster, a: Instance, b: Instance, leaseMs: number): Promise<PauseDrillResult> {
  const holding = new Promise<HoldingMessage>((resolve) => {
    const onMessage = (message: HoldingMessage): void => {
      if (message?.type !== 'holding' || message.orderId !== DRILL_ORDER) return;
      // Stop it right here, still inside its lock scope, before any other event can run in it.
      cluster.pause(a);
      a.process.off('message', onMessage);
      resolve(message);
    };
    a.process.on('message', onMessage);
  });
  const lateWrite = fetch(`${a.url}/orders/${DRILL_ORDER}/pay?drillStallMs=${leaseMs * 3}`, { method: 'POST' });
  const { fencingToken } = await holding;
  const pausedAt = Date.now();

  const takeover = await fetch(`${b.url}/orders/${DRILL_ORDER}/pay`, { method: 'POST' });
  const receipt = (await takeover.json()) as { fencingToken?: number };
  // B got in because A's lease ran out while A was frozen; keep A frozen a little past its lease anyway.
  while (Date.now() - pausedAt < leaseMs * 2) await new Promise((resolve) => setTimeout(resolve, 50));
  const pausedForMs = Date.now() - pausedAt;
  cluster.resume(a);

  const late = await lateWrite;
  const lateWriteBody = await late.text();
  return {
    pausedInstance: a.name,
    pausedFencingToken: fencingToken,
    takeoverInstance: b.name,
    takeoverStatus: takeover.status,
    takeoverFencingToken: receipt.fencingToken,
    pausedForMs,
    lateWriteStatus: late.status,
    lateWriteCode: errorCode(lateWriteBody),
    lateWriteBody,
  };
}

function errorCode(body: string): string | undefined {
  try {
    const code = (JSON.parse(body) as { code?: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}
