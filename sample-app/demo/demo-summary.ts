import type { InvariantCheck } from './invariants.js';
import type { InstanceTraffic } from './load-driver.js';
import type { PauseDrillResult } from './pause-drill.js';

export interface InstanceReport extends InstanceTraffic {
  readonly name: string;
  readonly acquisitions: number;
  readonly staleWritesRejected: number;
  readonly leasesLost: number;
  readonly cronRuns: number;
}

export interface DemoReport {
  readonly seconds: number;
  readonly instances: InstanceReport[];
  readonly waitP50Ms: number;
  readonly waitP99Ms: number;
  readonly doublePayments: number;
  readonly staleWritesRejected: number;
  readonly cronTicks: number;
  readonly drill: PauseDrillResult;
  readonly checks: InvariantCheck[];
  readonly ok: boolean;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** How the paused holder's late write ended, in words: refused by the fencing check, or what it got instead. */
export function describeLateWrite(drill: PauseDrillResult): string {
  if (drill.lateWriteCode === 'STALE_FENCING_TOKEN') {
    return `was refused by the database's fencing check (older token; HTTP ${drill.lateWriteStatus} STALE_FENCING_TOKEN), nothing written`;
  }
  return `was answered HTTP ${drill.lateWriteStatus}${drill.lateWriteCode ? ` ${drill.lateWriteCode}` : ''}, not refused by the fencing check`;
}

/** The at-a-glance summary: a table per instance, the drill, then every invariant with ✔ or ✘. */
export function formatSummary(report: DemoReport): string {
  const pad = (value: unknown, width: number): string => String(value).padStart(width);
  const lines = [
    '',
    `nestjs-distributed-lock demo: ${report.instances.length} instances, ${report.seconds} s of load`,
    '',
    `${'instance'.padEnd(12)}${pad('requests', 10)}${pad('200', 8)}${pad('409', 8)}${pad('errors', 8)}${pad('locks', 8)}${pad('cron', 6)}`,
    ...report.instances.map(
      (i) =>
        `${i.name.padEnd(12)}${pad(i.requests, 10)}${pad(i.ok, 8)}${pad(i.conflicts, 8)}${pad(i.errors, 8)}${pad(i.acquisitions, 8)}${pad(i.cronRuns, 6)}`,
    ),
    '',
    `lock waits            p50 ${report.waitP50Ms} ms, p99 ${report.waitP99Ms} ms`,
    `double payments       ${report.doublePayments}`,
    `stale writes refused  ${report.staleWritesRejected} (by the database's fencing check: older fencing token)`,
    `cron                  ${report.cronTicks} ticks, ${report.instances.reduce((n, i) => n + i.cronRuns, 0)} runs`,
    '',
    `pause drill: ${report.drill.pausedInstance} held the lock (fencing ${report.drill.pausedFencingToken}) and was SIGSTOPped ` +
      `for ${report.drill.pausedForMs} ms; ${report.drill.takeoverInstance} took over (HTTP ${report.drill.takeoverStatus}, ` +
      `fencing ${report.drill.takeoverFencingToken}); its late write ${describeLateWrite(report.drill)}.`,
    '',
    ...report.checks.map((c) => `${c.ok ? '✔' : '✘'} ${c.name}${c.ok ? '' : `: ${c.detail}`}`),
    '',
    report.ok ? 'ALL INVARIANTS HOLD' : 'INVARIANT VIOLATED',
  ];
  return lines.join('\n');
}
