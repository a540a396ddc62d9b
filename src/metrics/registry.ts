/**
 * A small Prometheus registry: counters, gauges read at scrape time, and histograms, written in
 * the text exposition format (version 0.0.4). Enough for our few series; no global state.
 */

type Labels = Readonly<Record<string, string>>;

function formatLabels(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  const escaped = entries.map(
    ([name, value]) => `${name}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`,
  );
  return `{${escaped.join(',')}}`;
}

export class Histogram {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly bucketsUpperBounds: readonly number[],
  ) {
    this.counts = bucketsUpperBounds.map(() => 0);
  }

  observe(value: number): void {
    this.sum += value;
    this.count++;
    for (let i = 0; i < this.bucketsUpperBounds.length; i++) {
      if (value <= (this.bucketsUpperBounds[i] as number)) this.counts[i] = (this.counts[i] as number) + 1;
    }
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    this.bucketsUpperBounds.forEach((bound, index) => {
      lines.push(`${this.name}_bucket${formatLabels({ le: String(bound) })} ${this.counts[index]}`);
    });
    lines.push(
      `${this.name}_bucket{le="+Inf"} ${this.count}`,
      `${this.name}_sum ${this.sum}`,
      `${this.name}_count ${this.count}`,
    );
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

export class MetricsRegistry {
  private readonly histograms: Histogram[] = [];
  private readonly gauges: GaugeSource[] = [];

  histogram(name: string, help: string, bucketsUpperBounds: readonly number[]): Histogram {
    const histogram = new Histogram(name, help, bucketsUpperBounds);
    this.histograms.push(histogram);
    return histogram;
  }

  gauge(source: GaugeSource): void {
    this.gauges.push(source);
  }

  async render(): Promise<string> {
    const parts: string[] = [];
    for (const gauge of this.gauges) {
      const samples = await gauge.read();
      parts.push(
        [
          `# HELP ${gauge.name} ${gauge.help}`,
          `# TYPE ${gauge.name} ${gauge.type ?? 'gauge'}`,
          ...samples.map((sample) => `${gauge.name}${formatLabels(sample.labels)} ${sample.value}`),
        ].join('\n'),
      );
    }
    for (const histogram of this.histograms) parts.push(histogram.render());
    return `${parts.join('\n')}\n`;
  }
}
