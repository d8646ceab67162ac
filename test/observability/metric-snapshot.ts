import type { Attributes } from '@opentelemetry/api';
import { DataPointType, MeterProvider, MetricReader, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics';

/** A reader that exports nothing on its own: the test collects when its script has reached a known state. */
class CollectingReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** A real OpenTelemetry SDK meter provider whose metrics the test reads back. */
export function inMemoryMetrics(): { meterProvider: MeterProvider; collect: () => Promise<MetricSnapshot> } {
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    meterProvider,
    collect: async () => {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw new AggregateError(errors, 'metric collection failed');
      return new MetricSnapshot(resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics));
    },
  };
}

/** One collection: data points looked up by instrument name and a subset of their attributes. */
export class MetricSnapshot {
  constructor(readonly metrics: MetricData[]) {}

  instrument(name: string): MetricData {
    const found = this.metrics.find((metric) => metric.descriptor.name === name);
    if (!found) throw new Error(`no metric "${name}" (have: ${this.metrics.map((m) => m.descriptor.name).join(', ')})`);
    return found;
  }

  /** Data points of `name` whose attributes include every one in `match` (none if nothing was recorded). */
  points(name: string, match: Attributes = {}): Array<{ attributes: Attributes; value: unknown }> {
    const metric = this.metrics.find((m) => m.descriptor.name === name);
    if (!metric) return [];
    return (metric.dataPoints as Array<{ attributes: Attributes; value: unknown }>).filter((point) =>
      Object.entries(match).every(([attribute, value]) => point.attributes[attribute] === value),
    );
  }

  /** Counters and up-down counters: the sum over matching points; histograms: the number of recordings. */
  count(name: string, match: Attributes = {}): number {
    const histogram = this.metrics.find((m) => m.descriptor.name === name)?.dataPointType === DataPointType.HISTOGRAM;
    return this.points(name, match).reduce(
      (total, point) => total + (histogram ? (point.value as Histogram).count : (point.value as number)),
      0,
    );
  }

  /** Histograms: the sum of the recorded values over matching points. */
  sum(name: string, match: Attributes = {}): number {
    return this.points(name, match).reduce((total, point) => total + ((point.value as Histogram).sum ?? 0), 0);
  }

  /** Every attribute name used on any point of any lock metric. */
  attributeNames(): Set<string> {
    return new Set(this.metrics.flatMap((metric) => metric.dataPoints.flatMap((point) => Object.keys(point.attributes))));
  }
}
