/**
 * A time-series chart on uPlot: one x axis of times (Unix ms) and a line per series, sized to its
 * container. The numbers are also given as a table for screen readers and for copying.
 */
import type { JSX } from "preact";
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";

export interface Series {
  label: string;
  values: ReadonlyArray<number | null>;
}

const COLOURS = ["#2f7d32", "#c62828", "#ef6c00", "#1565c0", "#6a1b9a", "#00838f", "#8d6e63", "#ad1457", "#546e7a"];

export function TimeChart(props: { title: string; timesMs: readonly number[]; series: readonly Series[]; height?: number }): JSX.Element {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    // A canvas knows no currentColor: the axes take the page's text colour (light or dark scheme) as drawn.
    const ink = getComputedStyle(el).color;
    const grid = { stroke: "rgba(127,127,127,.25)" };
    const data: uPlot.AlignedData = [props.timesMs.map((t) => t / 1000), ...props.series.map((s) => [...s.values])];
    const plot = new uPlot({
      width: Math.max(el.clientWidth, 200),
      height: props.height ?? 220,
      series: [{}, ...props.series.map((s, i) => ({ label: s.label, stroke: COLOURS[i % COLOURS.length], width: 2 }))],
      axes: [{ stroke: ink, grid, ticks: grid }, { stroke: ink, grid, ticks: grid }],
    }, data, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 200), height: props.height ?? 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.timesMs, props.series, props.height]);
  const totals = props.series.map((s) => s.values.reduce<number>((sum, v) => sum + (v ?? 0), 0));
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div ref={box} class="chart-plot" role="img" aria-label={`${props.title}: ${props.series.map((s, i) => `${s.label} ${totals[i]}`).join(", ")}`} />
      <table class="visually-hidden">
        <caption>{props.title}, totals</caption>
        <tbody>{props.series.map((s, i) => <tr key={s.label}><th scope="row">{s.label}</th><td>{totals[i]}</td></tr>)}</tbody>
      </table>
    </figure>
  );
}
