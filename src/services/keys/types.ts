/** Plain shapes the key services take and return (the HTTP schemas mirror them). */
import type { KeyView } from "../../lib/key-view.ts";
import type { RawJson } from "../../lib/raw-json.ts";

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

/** A key of an apis.listKeys page: its meta as its stored text, put into the answer as it is (lib/raw-json.ts). */
export type ListedKeyView = Omit<KeyView, "meta"> & { meta?: Record<string, unknown> | RawJson };
