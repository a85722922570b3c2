/**
 * Request schemas shared by both rate-limit path families (`/v2/ratelimit.*` and `/v2/ratelimits.*`)
 * and the response shapes they have in common. Bounds are upstream's (§5.15, §5.17); fields upstream
 * leaves unbounded stop at the largest exact integer.
 */
import { t } from "elysia";
import { Cursor, Int, pageLimitDescription, PageLimit, RatelimitDurationMs, strictObject } from "../../../http/schemas.ts";
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
  limit: t.Optional(Int({ minimum: 1, maximum: 100, description: pageLimitDescription(50) })),
  cursor: t.Optional(Cursor),
});

export const ListNamespacesBody = t.Optional(strictObject({
  limit: t.Optional(PageLimit),
  cursor: t.Optional(Cursor),
  search: t.Optional(t.String({ maxLength: 256, description: "Case-insensitive substring of the id or name" })),
}, "`{}` or an empty body lists the first page"));

export const NamespaceData = t.Object({
  id: t.String({ description: "Namespace id (`rlns_…`)" }),
  name: t.String({ description: "The namespace's name" }),
  createdAt: t.Integer({ description: "When it was created, on its first limit (Unix ms)" }),
});

export const LIST_NAMESPACES_DESCRIPTION = "A tollgate addition (upstream has no such route), used by the web console. "
  + "The workspace's live namespaces, paginated by id. Needs `ratelimit.*.read_override`; a key holding only "
  + "`ratelimit.<namespaceId>.read_override` grants sees just those namespaces, and a key that may read no "
  + "namespace's overrides gets 403.";

/** An override as both families return it. */
export function overrideData(o: OverrideView): OverrideView {
  return { overrideId: o.overrideId, identifier: o.identifier, limit: o.limit, duration: o.duration };
}

export const OverrideData = t.Object({
  overrideId: t.String({ description: "Override id (`rlor_…`)" }),
  identifier: t.String({ description: "The identifier or pattern it applies to" }),
  limit: t.Integer({ description: "Cost allowed per window" }),
  duration: t.Integer({ description: "Window length in milliseconds" }),
});

export const OverrideIdData = t.Object({ overrideId: t.String({ description: "Override id (`rlor_…`); the same when an override was replaced" }) });

const outcome = {
  limit: t.Integer({ description: "Cost allowed per window, after any override" }),
  remaining: t.Integer({ description: "What is left of the limit in this window" }),
  reset: t.Integer({ description: "End of the current window (Unix ms)" }),
  overrideId: t.Optional(t.String({ description: "The override that applied, if one did" })),
};

export const LimitData = t.Object({ success: t.Boolean({ description: "Whether the request is within the limit (a denial charges nothing)" }), ...outcome });

export const MultiLimitData = t.Object({
  passed: t.Boolean({ description: "Whether every check passed (then all were charged, else none)" }),
  limits: t.Array(t.Object({
    namespace: t.String({ description: "The namespace as requested" }),
    identifier: t.String({ description: "The identifier as requested" }),
    passed: t.Boolean({ description: "Whether this check is within its limit" }),
    ...outcome,
  }), { description: "One result per check, in request order" }),
});
