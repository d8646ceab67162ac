import { closeSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { HistoryRecord } from './records';

/**
 * An append-only NDJSON file written with `fs.writeSync`: every line is in the kernel before the call
 * returns, so a record survives the SIGKILL that follows it. One file per process: no interleaving.
 */
export class HistoryFile {
  private fd: number | undefined;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'a');
  }

  write(record: Record<string, unknown> & { type: string }, actor: string): void {
    if (this.fd === undefined) return;
    writeSync(this.fd, `${JSON.stringify({ t: Date.now(), p: actor, ...record })}\n`);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** The history files of a run directory: the parent's and one per application incarnation. */
const HISTORY_FILE = /^(parent|a\d+\.\d+)\.ndjson$/;

/** Every record of a run directory, merged on the one clock (stable: a file's own order is kept). */
export function readHistory(directory: string): HistoryRecord[] {
  const records: HistoryRecord[] = [];
  for (const name of readdirSync(directory).filter((file) => HISTORY_FILE.test(file)).sort()) {
    for (const line of readFileSync(join(directory, name), 'utf8').split('\n')) {
      // A process killed in the middle of a write leaves at most one torn last line.
      if (!line.trim()) continue;
      try {
        records.push(JSON.parse(line) as HistoryRecord);
      } catch {
        // torn line
      }
    }
  }
  return records.map((record, i) => ({ record, i })).sort((x, y) => x.record.t - y.record.t || x.i - y.i).map(({ record }) => record);
}
