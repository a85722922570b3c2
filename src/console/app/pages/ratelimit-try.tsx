/** A box to try a limit: ratelimit.limit or ratelimits.limit (the same check on both path families) and its answer. */
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { LimitAnswer } from "../api/routes.ts";
import { ErrorBanner } from "../components/error-banner.tsx";
import { Field } from "../components/field.tsx";
import { useSession } from "../context.ts";
import { formatTime } from "../format.ts";

const OPERATIONS = ["ratelimit.limit", "ratelimits.limit"] as const;

export function TryLimit(props: { namespace: string }): JSX.Element {
  const { client } = useSession();
  const [operation, setOperation] = useState<(typeof OPERATIONS)[number]>("ratelimit.limit");
  const [namespace, setNamespace] = useState(props.namespace);
  const [identifier, setIdentifier] = useState("");
  const [limit, setLimit] = useState("10");
  const [duration, setDuration] = useState("60000");
  const [answer, setAnswer] = useState<LimitAnswer | undefined>();
  const [error, setError] = useState<unknown>();
  useEffect(() => setNamespace(props.namespace), [props.namespace]);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setAnswer(undefined);
    try {
      setAnswer(await client.call(operation, { namespace: namespace.trim(), identifier: identifier.trim(), limit: Number(limit), duration: Number(duration) }));
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form onSubmit={submit} aria-label="Try a limit">
      <h2>Try a limit</h2>
      <p class="muted">A real check: it uses up the limit like any other request.</p>
      <div class="field">
        <label for="try-operation">Operation</label>
        <select id="try-operation" value={operation} onChange={(e) => setOperation(e.currentTarget.value as typeof operation)}>
          {OPERATIONS.map((o) => <option key={o} value={o}>{o}</option>)}
        </select>
      </div>
      <Field label="Namespace" value={namespace} onInput={setNamespace} required />
      <Field label="Identifier to limit" value={identifier} onInput={setIdentifier} required />
      <Field label="Limit per window" type="number" value={limit} onInput={setLimit} required />
      <Field label="Window (ms)" type="number" value={duration} onInput={setDuration} required />
      <div class="actions"><button type="submit" disabled={namespace.trim() === "" || identifier.trim() === ""}>Check</button></div>
      <ErrorBanner error={error} />
      {answer && (
        <dl class="facts" data-testid="limit-answer">
          <dt>Success</dt><dd>{answer.success ? "yes" : "no (limited)"}</dd>
          <dt>Limit</dt><dd>{answer.limit}</dd>
          <dt>Remaining</dt><dd>{answer.remaining}</dd>
          <dt>Reset</dt><dd>{formatTime(answer.reset)}</dd>
          {answer.overrideId && <><dt>Override</dt><dd><code>{answer.overrideId}</code></dd></>}
        </dl>
      )}
    </form>
  );
}
