import { CLUSTER_ENTRANTS } from '../scenarios/cluster-contended.scenario.js';
import type { BenchResults } from './bench-results.js';
import { num, ratioText, spreadText, table } from './format.js';
import { contendedRowsTable, type Namer } from './scenario-tables.js';

/** Scenario 3's workload on a Cluster. */
export function clusterContendedTable(results: BenchResults, name: Namer): string[] {
  if (results.clusterContended.length === 0) return [];
  const c = results.config.contended;
  return [
    `## 3c. Contended on a Redis Cluster (3 masters, 3 replicas): ${c.workers} workers over ${c.instances} instances on ONE key (${c.repetitions} × ${num(c.durationMs)} ms)`,
    '',
    'This library only, each instance a Cluster client of its own, in four configurations. The key, its queue, its fencing ' +
      "counter and its channels share the key's hash slot, so every script runs on the one master that serves it. Cmds/CS: server commands summed over every master.",
    '',
    contendedRowsTable(results.clusterContended, (id) => CLUSTER_ENTRANTS.find((entrant) => entrant.id === id)?.label ?? name(id)),
    '',
  ];
}

/** Scenario 5 on a Cluster: renew calls per interval against per-slot batching and the floor. */
export function clusterWatchdogTable(results: BenchResults): string[] {
  const row = results.clusterWatchdog;
  if (!row) return [];
  return [
    `## 5c. Watchdog on a Redis Cluster (${row.masters} masters): ${num(row.leases)} leases of ${num(row.leaseMs)} ms`,
    '',
    'Top-level EVALSHA/EVAL calls on all masters per renew interval (lease / 3), from INFO commandstats. Renewals are grouped per node ' +
      "(Redis 7 cross-slot scripts); batching per hash slot would cost one call per slot the leases fall in." +
      (row.error ? ` Failed: ${row.error}.` : ''),
    '',
    table(
      ['calls per interval', 'minimum (1 per node per 1000 leases)', 'per-slot batching would need', 'lost'],
      [[spreadText(row.callsPerInterval, 1), num(row.minimumCallsPerInterval), num(row.slots), String(row.lostLeases)]],
      0,
    ),
    '',
  ];
}

/** Scenario 8: `replicas: 1` against `replicas: 0`. */
export function replicaAckTable(results: BenchResults): string[] {
  const row = results.replicaAck;
  if (!row) return [];
  const c = results.config.replicaAck;
  return [
    `## 8. Replica acknowledgement: \`replicas: 1\` against \`replicas: 0\` (${c.repetitions} × ${num(c.durationMs)} ms, primary + 1 replica on loopback)`,
    '',
    'Every grant and renewal waits for the replica (`WAIT 1`): one more round trip, to the replica, per acquisition.' + (row.error ? ` Failed: ${row.error}.` : ''),
    '',
    table(
      ['workload', 'replicas: 0 pairs/s', 'replicas: 1 pairs/s', 'replicas: 1 / replicas: 0'],
      [
        ['sequential, 1 worker', spreadText(row.sequential.replicas0), spreadText(row.sequential.replicas1), ratioText(row.sequential.ratio)],
        ['64 workers, distinct keys', spreadText(row.concurrent.replicas0), spreadText(row.concurrent.replicas1), ratioText(row.concurrent.ratio)],
      ],
    ),
    '',
  ];
}
