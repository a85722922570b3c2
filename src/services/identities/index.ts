/**
 * Identities: the owner of keys outside the service, addressed by `externalId` (unique among live
 * identities of a workspace, enforced by a partial unique index). Keys of one identity share its
 * metadata and its rate limits. Identities are soft-deleted: the externalId is free again at once,
 * and keys of a deleted identity keep verifying, without it. Every change drops the key cache.
 */
export {
  upsertIdentityIn, findLiveIdentityIn, replaceRatelimitsIn,
  type IdentitySummary, type RatelimitConfig, type RatelimitInput,
} from "./records.ts";
export {
  IdentityService, type IdentityDeps, type IdentityView, type IdentityPage, type CreateIdentityInput, type UpdateIdentityInput,
} from "./service.ts";
