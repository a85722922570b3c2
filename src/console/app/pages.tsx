/**
 * Every page of the console: its path under /console, its label in the navigation (if any) and
 * what it renders. Adding a page is one file in pages/ and one entry here.
 */
import type { JSX } from "preact";
import { allows, allowsSome, type Action, type Grants } from "./permissions.ts";
import { Overview } from "./pages/overview.tsx";
import { ApisPage } from "./pages/apis.tsx";
import { ApiPage } from "./pages/api.tsx";
import { KeyPage } from "./pages/key.tsx";
import { RatelimitsPage } from "./pages/ratelimits.tsx";
import { IdentitiesPage } from "./pages/identities.tsx";
import { PermissionsPage } from "./pages/permissions.tsx";
import { RolesPage } from "./pages/roles.tsx";
import { AuditPage } from "./pages/audit.tsx";
import { AnalyticsPage } from "./pages/analytics.tsx";

export interface PageEntry {
  pattern: string;
  /** The navigation's label; pages reached from another page have none. */
  nav?: string;
  /** Shown in the navigation only to a key allowed this (the page itself still handles a refusal). */
  needs?: Action;
  /** `needs` on any one id is enough (a list page shows what the key may see of it). */
  anyId?: true;
  render(params: Record<string, string>): JSX.Element;
}

export const PAGES: readonly PageEntry[] = [
  { pattern: "/console", nav: "Overview", render: () => <Overview /> },
  { pattern: "/console/apis", nav: "APIs & keys", needs: { resource: "api", action: "read_api" }, anyId: true, render: () => <ApisPage /> },
  { pattern: "/console/apis/:apiId", render: (p) => <ApiPage apiId={p.apiId!} /> },
  { pattern: "/console/apis/:apiId/keys/:keyId", render: (p) => <KeyPage apiId={p.apiId!} keyId={p.keyId!} /> },
  { pattern: "/console/ratelimits", nav: "Rate limits", needs: { resource: "ratelimit", action: "read_override" }, anyId: true, render: () => <RatelimitsPage /> },
  { pattern: "/console/ratelimits/:namespace", render: (p) => <RatelimitsPage namespace={p.namespace!} /> },
  { pattern: "/console/identities", nav: "Identities", needs: { resource: "identity", action: "read_identity" }, render: () => <IdentitiesPage /> },
  { pattern: "/console/permissions", nav: "Permissions", needs: { resource: "rbac", action: "read_permission" }, render: () => <PermissionsPage /> },
  { pattern: "/console/roles", nav: "Roles", needs: { resource: "rbac", action: "read_role" }, render: () => <RolesPage /> },
  { pattern: "/console/audit", nav: "Audit log", needs: { resource: "audit", action: "read_log" }, render: () => <AuditPage /> },
  { pattern: "/console/analytics", nav: "Analytics", needs: { resource: "api", action: "read_analytics" }, anyId: true, render: () => <AnalyticsPage /> },
];

export function navEntries(grants: Grants): PageEntry[] {
  return PAGES.filter((p) => p.nav !== undefined && (p.needs === undefined || (p.anyId ? allowsSome(grants, p.needs.resource, p.needs.action) : allows(grants, p.needs))));
}
