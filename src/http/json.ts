/** JSON responses with the headers every response carries. */
export function jsonResponse(body: unknown, status: number, requestId: string, extraHeaders?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "x-request-id": requestId, ...extraHeaders },
  });
}
