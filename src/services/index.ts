/** The set of services the HTTP app and the CLI work with; boot.ts builds the concrete ones. */
import type { RootKeyAuthenticator } from "./auth/index.ts";
import type { ApiService } from "./apis/index.ts";
import type { IdentityService } from "./identities/index.ts";
import type { KeyService } from "./keys/index.ts";
import type { RbacService } from "./rbac/index.ts";
import type { KeySnapshot, VerificationService } from "./verification/index.ts";
import type { KeyCache } from "./key-cache/index.ts";
import type { RatelimitService, SlidingWindowLimiter } from "./ratelimit/index.ts";
import type { WorkspaceService } from "./workspaces/index.ts";
import type { AuditService } from "./audit/index.ts";
import type { AnalyticsQueryService, RatelimitDecisionAggregator, VerificationEventSink, VerificationTotalsReader } from "./analytics/index.ts";
import type { CreditAccounts } from "./credits/index.ts";
import type { QuotaService } from "./quotas/index.ts";

export interface Services {
  auth: RootKeyAuthenticator;
  workspaces: WorkspaceService;
  apis: ApiService;
  keys: KeyService;
  identities: IdentityService;
  rbac: RbacService;
  verification: VerificationService;
  ratelimits: RatelimitService;
  audit: AuditService;
  /** The workspace quotas in force and each workspace's use of them (`tollgate stats`, rootKeys.whoami). */
  quotas: QuotaService;
  /** analytics.getVerifications: callers' SQL, run off the main thread. */
  analytics: AnalyticsQueryService;
  /** Verification counts by API and outcome, from the totals tables (the embedded mode's, for `tollgate stats`). */
  verificationTotals?: VerificationTotalsReader;
  /** Shared state of the hot paths, for jobs and shutdown. */
  keyCache: KeyCache<KeySnapshot>;
  /** Credit balances and the journal of spends; restored at start, flushed on stop (none in the cluster mode). */
  credits: CreditAccounts;
  /** The in-memory rate-limit windows of the embedded mode (none on a cluster node: its windows are in Redis). */
  limiter?: SlidingWindowLimiter;
  /** Buffered verification events, written by the analytics flush job and on stop. */
  verificationEvents: VerificationEventSink;
  /** Rate-limit decisions counted per namespace and minute, flushed with the verification events. */
  ratelimitDecisions: RatelimitDecisionAggregator;
}
