/**
 * Request schemas shared by both rate-limit path families (`/v2/ratelimit.*` and `/v2/ratelimits.*`)
 * and the response shapes they have in common. Bounds are upstream's (§5.15, §5.17); fields upstream
 * leaves unbounded stop at the largest exact integer.
 */
import { t } from "elysia";
import { Cursor, Int, RatelimitDurationMs, strictObject } from "../../../http/schemas.ts";
import type { OverrideView } from "../../../services/ratelimit/index.ts";

const MAX_INT = Number.MAX_SAFE_INTEGER;

export const NamespaceRef = t.String({ minLength: 1, maxLength: 512, description: "Namespace name or id (`rlns_…`); a new name is created on first use" });
export const Identifier = t.String({ minLength: 1, maxLength: 512, description: "Who is limited: a user id, an IP, a key id…" });
export const OverrideIdentifier = t.String({ minLength: 1, maxLength: 512, description: "Identifier of the override; `*` matches any run of characters" });

export const LimitBody = strictObject({
  namespace: NamespaceRef,
  identifier: Identifier,
  limit: Int({ minimum: 1, maximum: MAX_INT, description: "Cost allowed per window (an override replaces it)" }),
  duration: RatelimitDurationMs("Window length in milliseconds, 1000 to 2592000000 (30 days; an override replaces it)"),
  cost: t.Optional(Int({ minimum: 0, maximum: MAX_INT, description: "How much of the limit this request uses (default 1; 0 only reports)" })),
});

export const MultiLimitBody = t.Array(LimitBody, { minItems: 1, maxItems: 100, description: "Checks charged all-or-nothing" });

export const SetOverrideBody = strictObject({
  namespace: NamespaceRef,
  identifier: OverrideIdentifier,
  limit: Int({ minimum: 0, maximum: MAX_INT, description: "Cost allowed per window; 0 denies every request" }),
  duration: RatelimitDurationMs("Window length in milliseconds, 1000 to 2592000000 (30 days)"),
});

export const OverrideRefBody = strictObject({
  namespace: NamespaceRef,
  identifier: OverrideIdentifier,
});

export const ListOverridesBody = strictObject({
  namespace: NamespaceRef,
  limit: t.Optional(Int({ minimum: 1, maximum: 100, description: "Page size, 1 to 100 (default 50)" })),
  cursor: t.Optional(Cursor),
});

/** An override as both families return it. */
export function overrideData(o: OverrideView): OverrideView {
  return { overrideId: o.overrideId, identifier: o.identifier, limit: o.limit, duration: o.duration };
}
