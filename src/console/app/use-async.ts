/** `useAsync(load, deps)`: the latest answer of an async load, re-run when deps change; late answers of older runs are dropped. */
import { useEffect, useState } from "preact/hooks";

export interface AsyncState<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Runs the load again (after a change the page made). */
  reload(): void;
}

export function useAsync<T>(load: () => Promise<T>, deps: readonly unknown[]): AsyncState<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true, error: undefined }));
    load().then((data) => live && setState({ data, error: undefined, loading: false }), (error: unknown) => live && setState({ data: undefined, error, loading: false }));
    return () => {
      live = false;
    };
  }, [...deps, version]);
  return { ...state, reload: () => setVersion((v) => v + 1) };
}
