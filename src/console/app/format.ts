/** How the console writes times, credits and counts. */

/** A Unix-ms time as `2026-06-01 14:30 UTC`: one zone everywhere, the service's. */
export function formatTime(ms: number | undefined): string {
  if (ms === undefined) return "—";
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export function formatCredits(credits: { remaining: number | null } | undefined): string {
  if (credits === undefined || credits.remaining === null) return "unlimited";
  return String(credits.remaining);
}
