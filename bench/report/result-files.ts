import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchResults } from './bench-results.js';

const RESULTS_DIR = join(__dirname, '..', 'results');

/** Writes `<timestamp>-<mode>.json/.md` and overwrites `latest.json/.md`; bench/results/ is git-ignored. */
export function writeResultFiles(results: BenchResults, markdown: string): { json: string; markdown: string } {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = results.environment.startedAt.replace(/[:.]/g, '-');
  const base = join(RESULTS_DIR, `${stamp}-${results.config.mode}`);
  const json = JSON.stringify(results, (_key, value) => (typeof value === 'number' && !Number.isFinite(value) ? null : value), 2);
  writeFileSync(`${base}.json`, json);
  writeFileSync(`${base}.md`, markdown);
  writeFileSync(join(RESULTS_DIR, 'latest.json'), json);
  writeFileSync(join(RESULTS_DIR, 'latest.md'), markdown);
  return { json: `${base}.json`, markdown: `${base}.md` };
}
