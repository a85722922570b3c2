/** Success bodies. Routes return `ok(...)`/`okPage(...)`; the app adds `meta` and serialises once. */
export class Ok {
  constructor(readonly data: unknown, readonly extra?: Record<string, unknown>) {}
}

export function ok(data: unknown): Ok {
  return new Ok(data);
}

/** A list page: `data` plus `pagination {cursor?, hasMore}`, the cursor left out on the last page. */
export function okPage(items: unknown[], cursor: string | undefined): Ok {
  return new Ok(items, { pagination: cursor === undefined ? { hasMore: false } : { cursor, hasMore: true } });
}
