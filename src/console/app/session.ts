/**
 * The signed-in root key, kept in this tab's sessionStorage only: never a cookie (sent to the
 * server on every request, and on requests other sites trigger), never localStorage (outlives the
 * tab), never the URL (history, logs, Referer).
 */
const STORAGE_KEY = "tollgate.rootKey";

export function storedRootKey(): string | undefined {
  return sessionStorage.getItem(STORAGE_KEY) ?? undefined;
}

export function storeRootKey(rootKey: string): void {
  sessionStorage.setItem(STORAGE_KEY, rootKey);
}

export function forgetRootKey(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}
