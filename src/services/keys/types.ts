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

export type { KeyView, RatelimitView } from "../../lib/key-view.ts";
