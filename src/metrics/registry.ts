/**
 * A small Prometheus registry: counters, gauges read at scrape time, and histograms, written in
 * the text exposition format (version 0.0.4). Enough for our few series; no global state.
 *
 * It is also the one source of the figures sent over OTLP (src/telemetry/metricsExport.ts): that
 * bridge reads the gauges and counters when it collects, and hears each histogram observation.
 */

export type Labels = Readonly<Record<string, string>>;

function formatLabels(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  const escaped = entries.map(
    ([name, value]) => `${name}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`,
  );
  return `{${escaped.join(',')}}`;
}

/** One label set's buckets, sum and count. */
interface HistogramSeries {
  labels: Labels;
  counts: number[];
  sum: number;
  count: number;
}

/** Hears every observation of a histogram (the OTLP bridge). */
export type ObservationListener = (value: number, labels: Labels) => void;

export class Histogram {
  private readonly series = new Map<string, HistogramSeries>();
  private readonly listeners: ObservationListener[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    readonly bucketsUpperBounds: readonly number[],
  ) {
    // The series without labels is always shown (0 observations), as before labels existed.
    this.seriesFor({});
  }

  observe(value: number, labels: Labels = {}): void {
    const series = this.seriesFor(labels);
    series.sum += value;
    series.count++;
    for (let i = 0; i < this.bucketsUpperBounds.length; i++) {
      if (value <= (this.bucketsUpperBounds[i] as number))
        series.counts[i] = (series.counts[i] as number) + 1;
    }
    for (const listener of this.listeners) listener(value, labels);
  }

  onObserve(listener: ObservationListener): void {
    this.listeners.push(listener);
  }

  private seriesFor(labels: Labels): HistogramSeries {
    const key = formatLabels(labels);
    let series = this.series.get(key);
    if (!series) {
      series = { labels, counts: this.bucketsUpperBounds.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, series);
    }
    return series;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const series of this.series.values()) {
      // A labelled histogram shows only the label sets it has seen.
      if (series.count === 0 && Object.keys(series.labels).length === 0 && this.series.size > 1) continue;
      this.bucketsUpperBounds.forEach((bound, index) => {
        lines.push(
          `${this.name}_bucket${formatLabels({ ...series.labels, le: String(bound) })} ${series.counts[index]}`,
        );
      });
      lines.push(
        `${this.name}_bucket${formatLabels({ ...series.labels, le: '+Inf' })} ${series.count}`,
        `${this.name}_sum${formatLabels(series.labels)} ${series.sum}`,
        `${this.name}_count${formatLabels(series.labels)} ${series.count}`,
      );
    }
    return lines.join('\n');
  }
}

export interface GaugeSample {
  labels: Labels;
  value: number;
}

/** A gauge whose samples are read when Prometheus scrapes (or a counter kept elsewhere). */
export interface GaugeSource {
  name: string;
  help: string;
  /** counter: the samples are totals that only grow (a `_total` name). Default gauge. */
  type?: 'gauge' | 'counter';
  read(): Promise<GaugeSample[]>;
}

/** A counter kept here, by label set (a `_total` name). */
export class Counter {
  private readonly totals = new Map<string, GaugeSample>();

  add(labels: Labels, amount = 1): void {
    const key = formatLabels(labels);
    const sample = this.totals.get(key);
    if (sample) sample.value += amount;
    else this.totals.set(key, { labels, value: amount });
  }

  samples(): GaugeSample[] {
    return [...this.totals.values()].map((sample) => ({ labels: sample.labels, value: sample.value }));
  }
}

export class MetricsRegistry {
  private readonly histogramList: Histogram[] = [];
  private readonly gaugeList: GaugeSource[] = [];

  histogram(name: string, help: string, bucketsUpperBounds: readonly number[]): Histogram {
    const histogram = new Histogram(name, help, bucketsUpperBounds);
    this.histogramList.push(histogram);
    return histogram;
  }

  gauge(source: GaugeSource): void {
    this.gaugeList.push(source);
  }

  counter(name: string, help: string): Counter {
    const counter = new Counter();
    this.gauge({ name, help, type: 'counter', read: async () => counter.samples() });
    return counter;
  }

  /** The gauges and counters registered so far (read by the OTLP bridge at each collection). */
  get gauges(): readonly GaugeSource[] {
    return this.gaugeList;
  }

  get histograms(): readonly Histogram[] {
    return this.histogramList;
  }

  async render(): Promise<string> {
    const parts: string[] = [];
    for (const gauge of this.gaugeList) {
      const samples = await gauge.read();
      parts.push(
        [
          `# HELP ${gauge.name} ${gauge.help}`,
          `# TYPE ${gauge.name} ${gauge.type ?? 'gauge'}`,
          ...samples.map((sample) => `${gauge.name}${formatLabels(sample.labels)} ${sample.value}`),
        ].join('\n'),
      );
    }
    for (const histogram of this.histogramList) parts.push(histogram.render());
    return `${parts.join('\n')}\n`;
  }
}
