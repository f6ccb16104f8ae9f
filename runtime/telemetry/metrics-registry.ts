/**
 * A small Prometheus metrics registry: counters, gauges and histograms with
 * labels, rendered in the text exposition format (version 0.0.4). Recording
 * is a map lookup and an addition; the text is only built when /metrics is
 * scraped, so nobody pays for metrics nobody reads.
 */

type Labels = Record<string, string>;

interface Metric {
  readonly name: string;
  render(out: string[]): void;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

function labelKey(names: readonly string[], labels: Labels): string {
  let key = '';
  for (const name of names) key += `${labels[name] ?? ''}\u0000`;
  return key;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function formatLabels(names: readonly string[], key: string, extra = ''): string {
  const values = key.split('\u0000');
  const parts = names.map((name, i) => `${name}="${escapeLabel(values[i])}"`);
  if (extra) parts.push(extra);
  return parts.length ? `{${parts.join(',')}}` : '';
}

function formatNumber(n: number): string {
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return Number.isNaN(n) ? 'NaN' : String(n);
}

function header(out: string[], name: string, help: string, type: string) {
  out.push(`# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${name} ${type}`);
}

/**
 * A metric's series, found by walking its label values one map at a time:
 * recording (on every call and request) builds no key string. The flat
 * key is made once per new series, for rendering, in first-seen order.
 */
class SeriesTable<T> {
  readonly byKey = new Map<string, T>();
  private readonly root = new Map<string, unknown>();

  constructor(
    private readonly names: readonly string[],
    private readonly make: () => T,
  ) {}

  /** The series for `labels`, made on first use. */
  get(labels: Labels): T {
    return this.walk(labels, true)!;
  }

  /** The series for `labels` if it was ever recorded. */
  find(labels: Labels): T | undefined {
    return this.walk(labels, false);
  }

  private walk(labels: Labels, create: boolean): T | undefined {
    // One map per label but the last, whose map holds the series (a metric without labels: one series under '').
    const last = this.names.length - 1;
    let level = this.root;
    for (let i = 0; i < last; i++) {
      const value = labels[this.names[i]] ?? '';
      let next = level.get(value) as Map<string, unknown> | undefined;
      if (!next) {
        if (!create) return undefined;
        level.set(value, (next = new Map()));
      }
      level = next;
    }
    const value = last < 0 ? '' : (labels[this.names[last]] ?? '');
    let series = level.get(value) as T | undefined;
    if (series === undefined && create) {
      series = this.make();
      level.set(value, series);
      this.byKey.set(labelKey(this.names, labels), series);
    }
    return series;
  }
}

/** One number per label set: what a counter and a gauge share. */
abstract class SampleMetric implements Metric {
  protected readonly values: SeriesTable<{ value: number }>;
  protected abstract readonly type: 'counter' | 'gauge';
  constructor(
    readonly name: string,
    private readonly help: string,
    protected readonly labelNames: readonly string[] = [],
  ) {
    this.values = new SeriesTable(labelNames, () => ({ value: 0 }));
  }

  get(labels: Labels = {}): number {
    return this.values.find(labels)?.value ?? 0;
  }

  protected addTo(labels: Labels, by: number): void {
    this.values.get(labels).value += by;
  }

  render(out: string[]): void {
    header(out, this.name, this.help, this.type);
    // A metric without labels is shown at 0 before its first change, so a query finds it.
    if (this.values.byKey.size === 0 && this.labelNames.length === 0) out.push(`${this.name} 0`);
    for (const [key, { value }] of this.values.byKey) out.push(`${this.name}${formatLabels(this.labelNames, key)} ${formatNumber(value)}`);
  }
}

export class Counter extends SampleMetric {
  protected readonly type = 'counter';

  inc(labels: Labels = {}, by = 1): void {
    this.addTo(labels, by);
  }
}

export class Gauge extends SampleMetric {
  protected readonly type = 'gauge';

  add(labels: Labels, by: number): void {
    this.addTo(labels, by);
  }

  set(labels: Labels, value: number): void {
    this.values.get(labels).value = value;
  }
}

interface HistogramSeries {
  buckets: number[];
  sum: number;
  count: number;
}

export class Histogram implements Metric {
  private readonly series: SeriesTable<HistogramSeries>;
  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly bounds: readonly number[],
  ) {
    this.series = new SeriesTable(labelNames, () => ({ buckets: new Array(bounds.length).fill(0), sum: 0, count: 0 }));
  }

  observe(labels: Labels, value: number): void {
    const series = this.series.get(labels);
    // Stored per bucket (not cumulative); rendering adds them up.
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]) i++;
    if (i < this.bounds.length) series.buckets[i]++;
    series.sum += value;
    series.count++;
  }

  render(out: string[]): void {
    header(out, this.name, this.help, 'histogram');
    for (const [key, series] of this.series.byKey) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += series.buckets[i];
        out.push(`${this.name}_bucket${formatLabels(this.labelNames, key, `le="${formatNumber(bound)}"`)} ${cumulative}`);
      });
      out.push(`${this.name}_bucket${formatLabels(this.labelNames, key, 'le="+Inf"')} ${series.count}`);
      out.push(`${this.name}_sum${formatLabels(this.labelNames, key)} ${formatNumber(series.sum)}`);
      out.push(`${this.name}_count${formatLabels(this.labelNames, key)} ${series.count}`);
    }
  }
}

export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.add(new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.add(new Gauge(name, help, labelNames));
  }

  histogram(name: string, help: string, labelNames: readonly string[], bounds: readonly number[]): Histogram {
    return this.add(new Histogram(name, help, labelNames, bounds));
  }

  /** The text exposition format, one metric family after another. */
  render(): string {
    const out: string[] = [];
    for (const metric of this.metrics.values()) metric.render(out);
    return out.join('\n') + '\n';
  }

  private add<M extends Metric>(metric: M): M {
    if (!NAME.test(metric.name)) throw new Error(`bad metric name ${metric.name}`);
    if (this.metrics.has(metric.name)) throw new Error(`metric ${metric.name} registered twice`);
    this.metrics.set(metric.name, metric);
    return metric;
  }
}
