/**
 * How every gauge of `/metrics` is registered: read afresh at each scrape, its series cleared
 * first, so a series that went away (a paused cause, a removed subscription) leaves with it.
 */
import { Gauge, type Registry } from 'prom-client';

/** Sets one series of a gauge: its labels and its value. */
export type SetSeries = (labels: Record<string, string>, value: number) => void;

/** What sets a gauge's series at a scrape. */
export type ReadSeries = (set: SetSeries) => Promise<void> | void;

/** Registers gauges on `registry`: `gauge(name, help, labelNames, read)`. */
export function gaugesOn(registry: Registry) {
  return (name: string, help: string, labelNames: readonly string[], read: ReadSeries): void => {
    new Gauge({
      name,
      help,
      labelNames: [...labelNames],
      registers: [registry],
      async collect() {
        this.reset();
        await read((labels, value) => this.set(labels, value));
      },
    });
  };
}
