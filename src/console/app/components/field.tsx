/** A labelled form input with an optional hint; the label is tied to the input for screen readers. */
import type { JSX, Ref } from "preact";
import { useId } from "preact/hooks";

export interface FieldProps {
  label: string;
  value: string;
  onInput(value: string): void;
  type?: "text" | "password" | "number" | "datetime-local" | "search";
  hint?: string;
  required?: boolean;
  placeholder?: string;
  autoFocus?: boolean;
  name?: string;
}

export function Field(props: FieldProps): JSX.Element {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        // preact types pair some attributes with particular input types; none of those is set here.
        type={(props.type ?? "text") as "text"}
        value={props.value}
        required={props.required}
        placeholder={props.placeholder}
        autoFocus={props.autoFocus}
        autoComplete="off"
        spellcheck={false}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
      {props.hint && <small id={`${id}-hint`} class="muted">{props.hint}</small>}
    </div>
  );
}

/** A labelled multi-line input (JSON, SQL); `inputRef` lets a page select a span in it. */
export function TextArea(props: { label: string; value: string; onInput(value: string): void; rows?: number; hint?: string; inputRef?: Ref<HTMLTextAreaElement> }): JSX.Element {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <textarea id={id} ref={props.inputRef} rows={props.rows ?? 4} value={props.value} spellcheck={false} autoComplete="off"
        aria-describedby={props.hint ? `${id}-hint` : undefined} onInput={(e) => props.onInput(e.currentTarget.value)} />
      {props.hint && <small id={`${id}-hint`} class="muted">{props.hint}</small>}
    </div>
  );
}
