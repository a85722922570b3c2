/** Copies a text to the clipboard and says so; where the clipboard is refused, asks to copy by hand. */
import type { JSX } from "preact";
import { useState } from "preact/hooks";

export function CopyButton(props: { text: string; label?: string }): JSX.Element {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
      setState("copied");
    } catch {
      setState("failed");
    }
  };
  const label = state === "copied" ? "Copied" : state === "failed" ? "Copy failed: select and copy" : (props.label ?? "Copy");
  return <button type="button" class="secondary" onClick={copy} aria-live="polite">{label}</button>;
}
