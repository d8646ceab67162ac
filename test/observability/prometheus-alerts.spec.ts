import { readFileSync } from 'node:fs';
import { createServer, get, type Server } from 'node:http';
import { join } from 'node:path';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { parse } from 'yaml';
import {
  DistributedLock,
  fencedWrite,
  LockNotAcquiredError,
  LockService,
  LockStore,
  LockStoreUnavailableError,
  StaleFencingTokenError,
  type Lease,
  type LockEventMap,
  type LockEventName,
  type LockModuleOptions,
} from '../../lib/index';
import { LockTestingModule, LockTestKit } from '../../lib/testing/index';
import { startLockedApp, type LockedApp } from '../decorator/locked-app';
import { redisUrl, testPrefix } from '../support/test-prefix';
import { alertRules, type AlertRule, parseExposition, type Sample } from './prometheus-exposition';

@Injectable()
class ReportService {
  @DistributedLock({ key: 'report:{id}', waitMs: 5_000 })
  async build(id: string, workMs: number): Promise<string> {
    await new Promise((resolve) => setTimeout(resolve, workMs));
    return `report ${id}`;
  }
}

const DOC = join(__dirname, '../../docs/observability.md');

/**
 * "Every documented alert names a series the recommended exporter writes" (DESIGN §4): the alert rules are
 * read out of docs/observability.md, and each series their expressions read is looked up, by its exact name,
 * in what the real `PrometheusExporter` serves after a scripted workload on the test Redis that makes every
 * alert's signal move: grants, a wait that runs out, waits woken by a release notification and by the
 * fallback timer, renewals, a lost lease, a stale write refused, a long hold, a store that does not answer and
 * a watchdog that falls behind. A series that the exporter never writes (a wrong suffix, a wrong unit) or that
 * stays at zero under the workload meant to move it fails the spec.
 */
describe('Prometheus alert rules in docs/observability.md', () => {
  const prefix = testPrefix(__filename);
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [exporter] });
  const otel: LockModuleOptions = { openTelemetry: { meterProvider } };
  const rules = alertRules(readFileSync(DOC, 'utf8'), parse);
  const scrapes: Sample[][] = [];
  let server: Server;
  let a: LockedApp;
  let b: LockedApp;
  let down: LockedApp;
  let stalled: INestApplication;

  /** What a Prometheus server would read from the exporter's HTTP handler right now. */
  const scrape = async (): Promise<Sample[]> => {
    const { port } = server.address() as { port: number };
    const text = await new Promise<string>((resolve, reject) =>
      get({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (response) => {
        expect(response.statusCode).toBe(200);
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => resolve(body)).on('error', reject);
      }).on('error', reject),
    );
    const samples = parseExposition(text);
    scrapes.push(samples);
    return samples;
  };
  const next = <E extends LockEventName>(app: LockedApp, event: E, key: string) =>
    app.next(event, (e: LockEventMap[E]) => e.key === key);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  beforeAll(async () => {
    server = createServer((request, response) => exporter.getMetricsRequestHandler(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    // A port nobody listens on: the application whose store never answers.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    [a, b, down] = await Promise.all([
      startLockedApp({ lock: { redis: redisUrl(), keyPrefix: prefix, leaseMs: 1_000, ...otel }, providers: [ReportService] }),
      // A waiter that races (`queue: false`), so that its fallback timer wakes it while the key stays held (a
      // queued waiter reports a backoff wake-up only for a grant its own look found).
      startLockedApp({ lock: { redis: redisUrl(), keyPrefix: prefix, leaseMs: 1_000, retryMaxDelayMs: 100, queue: false, ...otel } }),
      startLockedApp({ lock: { redis: `redis://127.0.0.1:${closedPort}`, keyPrefix: prefix, commandTimeoutMs: 200, ...otel } }),
    ]);
    const moduleRef = await Test.createTestingModule({ imports: [LockTestingModule.forRoot({ keyPrefix: prefix, ...otel })] }).compile();
    stalled = moduleRef.createNestApplication({ logger: false });
    await stalled.init();
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), down?.close(), stalled?.close()]);
    await meterProvider.shutdown();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  beforeAll(async () => {
    const locks = (app: LockedApp) => app.get(LockService);

    // Grants: a locked method, uncontended.
    for (const id of ['1', '2', '3']) expect(await a.get(ReportService).build(id, 0)).toBe(`report ${id}`);

    // A wait woken by the release notification: A's locked method waits for a key B holds.
    const held = await locks(b).acquire('report:4', { name: 'report:{id}' });
    const contention = next(a, 'contention', 'report:4');
    const waiting = a.get(ReportService).build('4', 0);
    await contention;
    await sleep(200); // past A's subscription, well before its fallback timer (about retryMaxDelayMs)
    await held.release();
    expect(await waiting).toBe('report 4');

    // A wait that runs out (LockNotAcquiredError), woken meanwhile by B's fallback timer.
    const blocking = await locks(a).acquire('report:5', { name: 'report:{id}' });
    await expect(locks(b).acquire('report:5', { name: 'report:{id}', waitMs: 800 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    await blocking.release();

    // A long hold, renewed by the watchdog (lease 1 s, renewed about every third of it): scraped while held.
    const building = a.get(ReportService).build('6', 1_500);
    await sleep(1_200);
    await scrape();
    expect(await building).toBe('report 6');

    // A lost lease and its holder's late write refused by fencing: the key is taken from B, its renewal is
    // rejected; A takes over and writes; B's write with its old fencing token is refused.
    const ledger = { value: 'initial', fence: 0 };
    const write = (lease: Lease, value: string) =>
      fencedWrite({
        resource: 'ledger',
        fencedBy: lease,
        apply: async (token) => {
          if (token < ledger.fence) return 0;
          Object.assign(ledger, { value, fence: token });
          return 1;
        },
        readFence: async () => ledger.fence,
      });
    const old = await locks(b).acquire('ledger', { name: 'ledger' });
    const lost = next(b, 'lost', 'ledger');
    await b.get<LockStore>(LockStore).forceRelease('ledger', old.fencingToken);
    expect(await lost).toMatchObject({ reason: 'rejected' });
    await locks(a).withLock('ledger', { name: 'ledger' }, (lease) => write(lease, 'new holder'));
    await expect(write(old, 'old holder')).rejects.toBeInstanceOf(StaleFencingTokenError);
    expect(ledger.value).toBe('new holder');
    await expect(old.release()).rejects.toThrow();

    // A store that does not answer: the acquisition fails closed.
    await expect(locks(down).acquire('report:7', { name: 'report:{id}', waitMs: 0 })).rejects.toBeInstanceOf(LockStoreUnavailableError);

    // A watchdog behind: one key's renewal gets no answer; scraped while it is overdue.
    const kit = stalled.get(LockTestKit);
    const hang = kit.store.fail({ operations: ['renew'], key: 'slow', effect: 'hang' });
    const slow = await stalled.get(LockService).acquire('slow', { name: 'slow', leaseMs: 3_000 });
    const until = Date.now() + 2_800;
    while (Date.now() < until && !value(await scrape(), 'distributed_lock_renew_overdue')) await sleep(50);
    hang.restore();
    await slow.release().catch(() => undefined);

    await scrape();
  }, 30_000);

  const value = (samples: Sample[], name: string) => samples.filter((s) => s.name === name).reduce((sum, s) => sum + s.value, 0);

  it('finds alert rules in the docs, each with an expression that reads at least one series', () => {
    expect(rules.length).toBeGreaterThanOrEqual(10);
    expect(rules.filter((rule) => rule.series.length === 0).map((rule) => rule.alert)).toEqual([]);
  });

  it('names only series the exporter writes, under their exact names', () => {
    const written = new Set(scrapes.flat().map((sample) => sample.name));
    const missing = rules.flatMap((rule) =>
      rule.series.filter((series) => !written.has(series.name)).map((series) => `${rule.alert}: ${series.name}`),
    );
    expect([...new Set(missing)]).toEqual([]);
  });

  it('reads series that move (non-zero, with the labels the rules match) under the workload made to trigger them', () => {
    const still = rules.flatMap((rule: AlertRule) =>
      rule.series
        .filter((series) => !scrapes.some((samples) => samples.some((sample) => sample.name === series.name && series.matches(sample) && sample.value > 0)))
        .map((series) => `${rule.alert}: ${series.text}`),
    );
    expect(still).toEqual([]);
  });
});
