/** JSON responses with the headers every response carries. */
export function jsonResponse(body: unknown, status: number, requestId: string, extraHeaders?: Record<string, string>): Response {
  return jsonTextResponse(JSON.stringify(body), status, requestId, extraHeaders);
}

/** jsonResponse for a body already serialised. */
export function jsonTextResponse(json: string, status: number, requestId: string, extraHeaders?: Record<string, string>): Response {
  // Spreading even an undefined `extraHeaders` costs as much as building the Response: only when given.
  const headers = { "content-type": "application/json", "x-request-id": requestId };
  return new Response(json, { status, headers: extraHeaders === undefined ? headers : { ...headers, ...extraHeaders } });
}
