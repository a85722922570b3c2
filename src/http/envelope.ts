/** Success bodies. Routes return `ok(...)`/`okPage(...)`; the app adds `meta` and serialises once. */
export class Ok {
  constructor(readonly data: unknown, readonly extra?: Record<string, unknown>) {}
}

/** The success body of `data`, once it is there: a service answers with a promise in the cluster mode. */
export function ok(data: unknown): Ok | Promise<Ok> {
  return data instanceof Promise ? data.then((resolved: unknown) => new Ok(resolved)) : new Ok(data);
}

/** A list page: `data` plus `pagination {cursor?, hasMore}`, the cursor left out on the last page. */
export function okPage(items: unknown[], cursor: string | undefined): Ok {
  return new Ok(items, { pagination: cursor === undefined ? { hasMore: false } : { cursor, hasMore: true } });
}
