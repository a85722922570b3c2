/**
 * The headers that keep a browser from running, framing or sniffing what this origin serves: the
 * console's, also sent with the /docs pages and every error answer, since all share one origin.
 */
export const PROTECTIVE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};
