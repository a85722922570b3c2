/**
 * A key as keys.getKey, keys.whoami and apis.listKeys answer it (upstream's KeyResponseData): the
 * key services return it and the console reads it, so both name the one shape. Types only.
 */

export interface RatelimitView {
  id: string;
  name: string;
  limit: number;
  duration: number;
  autoApply: boolean;
}

export interface KeyView {
  keyId: string;
  start: string;
  enabled: boolean;
  createdAt: number;
  name?: string;
  meta?: Record<string, unknown>;
  updatedAt?: number;
  lastUsedAt?: number;
  expires?: number;
  permissions?: string[];
  roles?: string[];
  credits?: { remaining: number | null; refill?: { interval: "daily" | "monthly"; amount: number; refillDay?: number } };
  identity?: { id: string; externalId: string; meta?: Record<string, unknown>; ratelimits?: RatelimitView[] };
  ratelimits?: RatelimitView[];
  plaintext?: string;
}
