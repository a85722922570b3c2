/**
 * What the soak watches of the server's memory: its resident memory (and the two parts of it,
 * anonymous and file-backed), that of its children (the analytics query processes), and the
 * footprint gauges of /metrics that the memory caps bound, sampled every few seconds. Medians of
 * windows of samples rather than single samples, because garbage collection swings single samples
 * up and down.
 */
import { childProcesses, median, residentKiB } from "../lib.ts";

/** The /metrics gauges and counters of the bounded footprint. */
export const FOOTPRINT_METRICS = [
  "tollgate_ratelimit_windows", "tollgate_ratelimit_window_bytes", "tollgate_ratelimit_windows_evicted_total",
  "tollgate_ratelimit_windows_unkept_total", "tollgate_key_cache_entries", "tollgate_key_cache_bytes",
  "tollgate_database_size_bytes", "tollgate_analytics_database_size_bytes",
] as const;
export type Footprint = Record<(typeof FOOTPRINT_METRICS)[number], number>;

export interface RssSample {
  atSeconds: number;
  rssKiB: number;
  anonKiB: number;
  fileKiB: number;
  /** Resident memory of all the server's children together, and how many there were. */
  childrenKiB: number;
  children: number;
  footprint: Footprint | undefined;
}

async function scrapeFootprint(url: string): Promise<Footprint | undefined> {
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN);
    return Object.fromEntries(FOOTPRINT_METRICS.map((name) => [name, value(name)])) as Footprint;
  } catch {
    return undefined;
  }
}

/** Samples the server at `pid` (and `url`'s /metrics) now and every `everySeconds`; stop() takes a last sample. */
export function sampleServer(pid: number, url: string, everySeconds: number): { samples: RssSample[]; stop(): Promise<void> } {
  const start = performance.now();
  const samples: RssSample[] = [];
  const pending = new Set<Promise<void>>();
  const take = () => {
    const atSeconds = Math.round((performance.now() - start) / 1000);
    const m = residentKiB(pid);
    const children = childProcesses(pid).map((child) => residentKiB(child).rss).filter((kib) => !Number.isNaN(kib));
    const sample: RssSample = {
      atSeconds, rssKiB: m.rss, anonKiB: m.anon, fileKiB: m.file, childrenKiB: children.reduce((a, b) => a + b, 0), children: children.length, footprint: undefined,
    };
    samples.push(sample);
    const scrape: Promise<void> = scrapeFootprint(url).then((f) => {
      sample.footprint = f;
    }).finally(() => pending.delete(scrape));
    pending.add(scrape);
  };
  take();
  const timer = setInterval(take, everySeconds * 1000);
  return {
    samples,
    async stop() {
      clearInterval(timer);
      if (samples[samples.length - 1]!.atSeconds !== Math.round((performance.now() - start) / 1000)) take();
      await Promise.all(pending);
    },
  };
}

/** The least-squares line through `samples`: its rise from the first to the last, as % of their mean. */
export function trend(samples: RssSample[]): number {
  if (samples.length < 2) return 0;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const mx = mean(samples.map((s) => s.atSeconds));
  const my = mean(samples.map((s) => s.rssKiB));
  const slope = samples.reduce((a, s) => a + (s.atSeconds - mx) * (s.rssKiB - my), 0) / samples.reduce((a, s) => a + (s.atSeconds - mx) ** 2, 0);
  return ((slope * (samples[samples.length - 1]!.atSeconds - samples[0]!.atSeconds)) / my) * 100;
}

export interface MemoryWindows {
  /** Median of the samples of the baseline: the window after the warm-up, or the warm-up's second half. */
  rssAfterWarmupKiB: number;
  /** Median of the samples in the last window. */
  rssAtEndKiB: number;
  growthPercent: number;
  windowSeconds: number;
  /** Least-squares trend of the samples after the warm-up, as % of their mean over that span: a leak shows here whatever the swings. */
  trendPercent: number;
  /** The same two medians for each part of VmRSS: anonymous memory (heaps) and file-backed (mapped files, e.g. SQLite's -shm). */
  parts: { anon: [number, number]; file: [number, number] };
  /** The largest sample after the warm-up, of the server and of its children together. */
  peakKiB: number;
  childrenPeakKiB: number;
}

/**
 * The medians of two windows of samples: the baseline and the last `window` seconds (60 s, less in a
 * short run). The baseline is the window after the warm-up, or with `baselineInWarmup` the second
 * half of the warm-up itself (when what comes after it is meant to grow).
 */
export function memoryWindows(samples: RssSample[], warmup: number, seconds: number, baselineInWarmup: boolean): MemoryWindows {
  const window = Math.max(1, Math.min(60, Math.floor((seconds - warmup) / 2)));
  const within = (start: number, end: number) => samples.filter((s) => s.atSeconds >= start && s.atSeconds <= end);
  const early = baselineInWarmup ? within(Math.floor(warmup / 2), warmup) : within(warmup, warmup + window);
  const late = within(seconds - window, Number.POSITIVE_INFINITY);
  const medians = (of: (s: RssSample) => number): [number, number] => [
    median(early.length ? early.map(of) : [of(samples[0]!)]), median(late.length ? late.map(of) : [of(samples[samples.length - 1]!)]),
  ];
  const [rssAfterWarmupKiB, rssAtEndKiB] = medians((s) => s.rssKiB);
  const after = samples.filter((s) => s.atSeconds >= warmup);
  return {
    rssAfterWarmupKiB, rssAtEndKiB, growthPercent: ((rssAtEndKiB - rssAfterWarmupKiB) / rssAfterWarmupKiB) * 100, windowSeconds: window,
    trendPercent: trend(after), parts: { anon: medians((s) => s.anonKiB), file: medians((s) => s.fileKiB) },
    peakKiB: Math.max(...after.map((s) => s.rssKiB)), childrenPeakKiB: Math.max(0, ...samples.map((s) => s.childrenKiB)),
  };
}
