/**
 * The console's only way to the server: POST /v2/<operation> with the root key, typed by
 * api/routes.ts. A failure is an ApiError carrying the envelope's error (title, detail, status,
 * type, field errors) and the request id, so pages can show the server's own words.
 */
import type { Routes } from "./routes.ts";

export interface FieldError {
  location: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly type: string | undefined,
    readonly requestId: string | undefined,
    readonly fieldErrors: readonly FieldError[] = [],
  ) {
    super(`${status} ${title}: ${detail}`);
  }
}

export interface Page<T> {
  items: T[];
  cursor: string | undefined;
}

interface Envelope {
  meta?: { requestId?: string };
  data?: unknown;
  pagination?: { cursor?: string; hasMore?: boolean };
  error?: { title?: string; detail?: string; status?: number; type?: string; errors?: FieldError[] };
}

/** What the client needs of fetch (tests hand in their own). */
export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** Calls the public v2 API as `rootKey`. */
export class ApiClient {
  constructor(private readonly rootKey: string, private readonly fetchFn: Fetch = (url, init) => fetch(url, init)) {}

  /** The operation's `data`; throws ApiError for an error envelope or a failed request. */
  async call<P extends keyof Routes>(path: P, body: Routes[P]["body"]): Promise<Routes[P]["data"]> {
    return (await this.send(path, body)).data as Routes[P]["data"];
  }

  /** A list operation's items and the cursor of the next page (undefined on the last). */
  async page<P extends keyof Routes>(path: P, body: Routes[P]["body"]): Promise<Page<Routes[P]["data"] extends Array<infer T> ? T : never>> {
    const envelope = await this.send(path, body);
    const items = Array.isArray(envelope.data) ? envelope.data : [];
    return { items: items as never[], cursor: envelope.pagination?.hasMore ? envelope.pagination.cursor : undefined };
  }

  /** A list operation's pages in order, `maxPages` at most, each asked for with the cursor the one before gave. */
  async *pages<P extends keyof Routes>(path: P, body: Routes[P]["body"], maxPages: number): AsyncGenerator<Page<Routes[P]["data"] extends Array<infer T> ? T : never>> {
    let cursor: string | undefined;
    for (let i = 0; i < maxPages; i++) {
      const page = await this.page(path, (cursor === undefined ? body : { ...body, cursor }) as Routes[P]["body"]);
      yield page;
      cursor = page.cursor;
      if (cursor === undefined) return;
    }
  }

  private async send(path: string, body: unknown): Promise<Envelope> {
    let res: Response;
    try {
      res = await this.fetchFn(`/v2/${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${this.rootKey}` },
        body: JSON.stringify(body),
      });
    } catch (error) {
      throw new ApiError(0, "Network error", `The server could not be reached (${String(error)}).`, undefined, undefined);
    }
    const envelope = (await res.json().catch(() => ({}))) as Envelope;
    if (res.ok && envelope.error === undefined) return envelope;
    const e = envelope.error ?? {};
    throw new ApiError(e.status ?? res.status, e.title ?? res.statusText, e.detail ?? "The server answered without an error body.", e.type, envelope.meta?.requestId, e.errors);
  }
}
