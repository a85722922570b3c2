/**
 * A raw HTTP/1.1 exchange over a TCP socket, for what fetch cannot do: send a request in parts, as
 * slowly as a test wants, watch for the answer while still sending, and see whether the server
 * closes the connection. The first response is parsed (status, headers, JSON body when it is JSON).
 */

export interface RawResponse {
  status: number;
  headers: Headers;
  body: any;
}

export interface RawExchange {
  /** The first response; rejects if the connection closes without one. */
  response: Promise<RawResponse>;
  /** Resolves when the connection is closed (by either side). */
  closed: Promise<void>;
  /** Body bytes (after the head) written so far. */
  readonly sentBodyBytes: number;
  /** Writes `data`, waiting while the socket's buffer is full; false once the connection is closed. */
  write(data: string | Uint8Array): Promise<boolean>;
  /** Writes `chunkBytes`-byte chunks (in chunked framing when `chunked`) until `totalBytes` are sent or the server answers or closes. */
  sendUntilAnswered(totalBytes: number, opts?: { chunkBytes?: number; chunked?: boolean }): Promise<void>;
  end(): void;
}

const encoder = new TextEncoder();

/** One chunk of a `Transfer-Encoding: chunked` body. */
export function chunk(data: Uint8Array): Uint8Array {
  const head = encoder.encode(`${data.byteLength.toString(16)}\r\n`);
  const out = new Uint8Array(head.byteLength + data.byteLength + 2);
  out.set(head);
  out.set(data, head.byteLength);
  out.set([13, 10], head.byteLength + data.byteLength);
  return out;
}

/** The head of a POST: request line and headers (`content-length` or `transfer-encoding` as given). */
export function postHead(url: string, path: string, headers: Record<string, string>): string {
  const host = new URL(url).host;
  return `POST ${path} HTTP/1.1\r\nhost: ${host}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`;
}

function parseResponse(bytes: Uint8Array): RawResponse | undefined {
  const text = new TextDecoder().decode(bytes);
  const end = text.indexOf("\r\n\r\n");
  if (end === -1) return undefined;
  const [statusLine = "", ...lines] = text.slice(0, end).split("\r\n");
  const headers = new Headers(lines.map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()] as [string, string]));
  const length = Number(headers.get("content-length") ?? "0");
  const bodyBytes = bytes.subarray(encoder.encode(text.slice(0, end + 4)).byteLength);
  if (bodyBytes.byteLength < length) return undefined;
  const bodyText = new TextDecoder().decode(bodyBytes.subarray(0, length));
  let body: unknown = bodyText;
  try {
    body = JSON.parse(bodyText);
  } catch {
    // Not JSON: the text itself.
  }
  return { status: Number(statusLine.split(" ")[1]), headers, body };
}

/** Connects to `url` and sends `head`; the rest of the request is the test's to write. */
export async function openExchange(url: string, head: string): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  let received = new Uint8Array(0);
  let answered: RawResponse | undefined;
  let isClosed = false;
  let drained: (() => void) | undefined;
  let resolveResponse!: (r: RawResponse) => void;
  let rejectResponse!: (e: Error) => void;
  let resolveClosed!: () => void;
  const response = new Promise<RawResponse>((resolve, reject) => { resolveResponse = resolve; rejectResponse = reject; });
  const closed = new Promise<void>((resolve) => { resolveClosed = resolve; });
  // A test that only watches `closed` must not fail on the response it never awaited.
  response.catch(() => {});
  const onClose = () => {
    isClosed = true;
    drained?.();
    rejectResponse(new Error("the connection closed without a response"));
    resolveClosed();
  };
  const socket = await Bun.connect({
    hostname: hostname.replace(/^\[|\]$/g, ""),
    port: Number(port),
    socket: {
      data(_, data) {
        const next = new Uint8Array(received.byteLength + data.byteLength);
        next.set(received);
        next.set(data, received.byteLength);
        received = next;
        answered ??= parseResponse(received);
        if (answered) resolveResponse(answered);
      },
      drain() { drained?.(); },
      close: onClose,
      end: onClose,
      error: onClose,
    },
  });
  let sentBodyBytes = 0;
  const writeAll = async (data: Uint8Array): Promise<boolean> => {
    let offset = 0;
    while (offset < data.byteLength) {
      if (isClosed) return false;
      const written = socket.write(data.subarray(offset));
      if (written < 0) return false;
      offset += written;
      if (offset < data.byteLength) await new Promise<void>((resolve) => { drained = resolve; });
    }
    return true;
  };
  await writeAll(encoder.encode(head));
  const exchange: RawExchange = {
    response,
    closed,
    get sentBodyBytes() { return sentBodyBytes; },
    async write(data) {
      const bytes = typeof data === "string" ? encoder.encode(data) : data;
      const ok = await writeAll(bytes);
      if (ok) sentBodyBytes += bytes.byteLength;
      return ok;
    },
    async sendUntilAnswered(totalBytes, opts = {}) {
      const size = opts.chunkBytes ?? 64 * 1024;
      const payload = new Uint8Array(size).fill(0x78);
      const framed = opts.chunked ? chunk(payload) : payload;
      for (let sent = 0; sent < totalBytes && answered === undefined && !isClosed; sent += size) {
        if (!(await exchange.write(framed))) return;
      }
    },
    end() { socket.end(); },
  };
  return exchange;
}
