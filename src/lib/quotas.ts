/**
 * The workspace quotas: what each bounds, the variable that sets it and its default. A leaf, so that
 * config.ts reads them, services/quotas enforces them and the CLI and the API show them from one table.
 * The defaults are generous (far above what a real workspace holds) and still bound what one
 * workspace can write: 1 GiB of records, a million keys.
 */

export type QuotaName = "keys" | "identities" | "permissions" | "roles" | "namespaces" | "storage";

/** Each quota's limit: a count of live records, or for `storage` bytes. */
export type WorkspaceQuotas = Record<QuotaName, number>;

export interface QuotaDefinition {
  name: QuotaName;
  variable: string;
  /** What the limit counts, for error details and the CLI. */
  counts: string;
  /** Default of the variable, in its own unit (MiB for storage). */
  defaultValue: number;
  max: number;
}

export const MiB = 1024 * 1024;

export const QUOTAS: readonly QuotaDefinition[] = [
  { name: "keys", variable: "TOLLGATE_WORKSPACE_MAX_KEYS", counts: "keys", defaultValue: 1_000_000, max: 1_000_000_000 },
  { name: "identities", variable: "TOLLGATE_WORKSPACE_MAX_IDENTITIES", counts: "identities", defaultValue: 1_000_000, max: 1_000_000_000 },
  { name: "permissions", variable: "TOLLGATE_WORKSPACE_MAX_PERMISSIONS", counts: "permissions", defaultValue: 10_000, max: 1_000_000_000 },
  { name: "roles", variable: "TOLLGATE_WORKSPACE_MAX_ROLES", counts: "roles", defaultValue: 1_000, max: 1_000_000_000 },
  { name: "namespaces", variable: "TOLLGATE_WORKSPACE_MAX_NAMESPACES", counts: "rate-limit namespaces", defaultValue: 10_000, max: 1_000_000_000 },
  { name: "storage", variable: "TOLLGATE_WORKSPACE_STORAGE_MB", counts: "bytes of records", defaultValue: 1_024, max: 16_777_216 },
];

/** The limits with every default: storage in bytes. */
export const DEFAULT_QUOTAS: WorkspaceQuotas = Object.fromEntries(
  QUOTAS.map((q) => [q.name, q.name === "storage" ? q.defaultValue * MiB : q.defaultValue]),
) as WorkspaceQuotas;

/** One quota's use against its limit, as the API and the CLI show it. */
export interface QuotaUse {
  quota: QuotaName;
  variable: string;
  used: number;
  limit: number;
}
