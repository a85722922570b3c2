/** 24 hours / 7 days / 30 days, as a group of toggle buttons. */
import type { JSX } from "preact";
import { RANGES, type RangeName } from "../analytics.ts";

export function RangePicker(props: { value: RangeName; onChange(range: RangeName): void }): JSX.Element {
  return (
    <div class="toolbar" role="group" aria-label="Time range">
      {(Object.keys(RANGES) as RangeName[]).map((r) => (
        <button key={r} type="button" class={props.value === r ? "" : "secondary"} aria-pressed={props.value === r} onClick={() => props.onChange(r)}>
          {RANGES[r].label}
        </button>
      ))}
    </div>
  );
}
