/**
 * Response-schema pieces several routes share: the records as the services return them (keys,
 * identities, permissions, roles, rate limits). For the OpenAPI document only (see responses.ts).
 */
import { t } from "elysia";
import type { TSchema } from "@sinclair/typebox";

const UnixMs = (description: string) => t.Integer({ description: `${description} (Unix ms)` });
const JsonObject = (description: string) => t.Record(t.String(), t.Unknown(), { description });

export const RatelimitData = t.Object({
  id: t.String({ description: "Id of the limit (`rl_…`)" }),
  name: t.String({ description: "Name of the limit" }),
  limit: t.Integer({ description: "Requests allowed per window" }),
  duration: t.Integer({ description: "Window length in milliseconds" }),
  autoApply: t.Boolean({ description: "Whether every verification applies it" }),
}, { description: "A rate limit of a key or an identity" });

export const PermissionData = t.Object({
  id: t.String({ description: "Permission id (`perm_…`)" }),
  name: t.String({ description: "Name, unique in the workspace (case-insensitive)" }),
  slug: t.String({ description: "Slug, as keys and permission queries name it" }),
  description: t.Optional(t.String({ description: "What it grants" })),
});

export const RoleData = t.Object({
  id: t.String({ description: "Role id (`role_…`)" }),
  name: t.String({ description: "Name, unique in the workspace (case-insensitive)" }),
  description: t.Optional(t.String({ description: "What it grants" })),
  permissions: t.Optional(t.Array(PermissionData, { description: "The role's permissions; absent when it has none" })),
});

export const IdentityData = t.Object({
  id: t.String({ description: "Identity id (`id_…`)" }),
  externalId: t.String({ description: "Your identifier of the owner" }),
  meta: JsonObject("The identity's meta, as stored (`{}` when none)"),
  ratelimits: t.Array(RatelimitData, { description: "Limits shared by every key of the identity" }),
});

export const CreditsData = t.Object({
  remaining: t.Union([t.Integer(), t.Null()], { description: "Remaining uses; null for unlimited" }),
  refill: t.Optional(t.Object({
    interval: t.Union([t.Literal("daily"), t.Literal("monthly")], { description: "daily (00:00 UTC) or monthly (on refillDay)" }),
    amount: t.Integer({ description: "Credits set at each refill" }),
    refillDay: t.Optional(t.Integer({ description: "Day of the month of a monthly refill" })),
  }, { description: "Automatic refill; absent when none" })),
}, { description: "The key's usage credits" });

export const KeyData = t.Object({
  keyId: t.String({ description: "Key id (`key_…`)" }),
  start: t.String({ description: "The key's prefix and first characters, to recognise it without its secret" }),
  enabled: t.Boolean({ description: "Whether verifications may succeed" }),
  createdAt: UnixMs("When the key was created"),
  name: t.Optional(t.String({ description: "The key's name" })),
  meta: t.Optional(JsonObject("The key's meta")),
  updatedAt: t.Optional(UnixMs("When the key was last changed")),
  lastUsedAt: t.Optional(UnixMs("When the key was last verified")),
  expires: t.Optional(UnixMs("When the key expires")),
  permissions: t.Optional(t.Array(t.String(), { description: "Slugs of every permission the key holds, its roles' included" })),
  roles: t.Optional(t.Array(t.String(), { description: "Names of the key's roles" })),
  credits: t.Optional(CreditsData),
  identity: t.Optional(t.Object({
    id: t.String({ description: "Identity id (`id_…`)" }),
    externalId: t.String({ description: "Your identifier of the owner" }),
    meta: t.Optional(JsonObject("The identity's meta")),
    ratelimits: t.Optional(t.Array(RatelimitData, { description: "The identity's limits" })),
  }, { description: "The identity the key belongs to" })),
  ratelimits: t.Optional(t.Array(RatelimitData, { description: "The key's own limits" })),
  plaintext: t.Optional(t.String({ description: "The key itself, only with `decrypt: true` for a recoverable key" })),
});

/** The new key's id and the key itself, shown once (createKey, rerollKey). */
export const NewKeyData = t.Object({
  keyId: t.String({ description: "Key id (`key_…`)" }),
  key: t.String({ description: "The key to hand to your user: shown only now, stored only as a hash" }),
});

/** `data` as a list of `item`s (a list page, or the records an operation leaves). */
export const ListOf = (item: TSchema, description: string) => t.Array(item, { description });
