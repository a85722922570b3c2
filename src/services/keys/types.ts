/** Plain shapes the key services take and return (the HTTP schemas mirror them). */

export interface RefillInput {
  interval: "daily" | "monthly";
  amount: number;
  refillDay?: number;
}

export interface CreditsInput {
  remaining?: number | null;
  refill?: RefillInput;
}

import type { RatelimitInput } from "../identities/index.ts";

export type { RatelimitInput };

export interface CreateKeyInput {
  apiId: string;
  prefix?: string;
  name?: string;
  byteLength?: number;
  externalId?: string;
  meta?: Record<string, unknown>;
  roles?: string[];
  permissions?: string[];
  expires?: number;
  credits?: CreditsInput;
  ratelimits?: RatelimitInput[];
  enabled?: boolean;
  recoverable?: boolean;
}

/** A key as getKey, whoami and listKeys return it (upstream's KeyResponseData). */
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

export interface RatelimitView {
  id: string;
  name: string;
  limit: number;
  duration: number;
  autoApply: boolean;
}
