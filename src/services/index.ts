/** The set of services the HTTP app and the CLI work with; boot.ts builds the concrete ones. */
import type { RootKeyAuthenticator } from "./auth/index.ts";
import type { ApiService } from "./apis/index.ts";
import type { KeyService } from "./keys/index.ts";
import type { VerificationService } from "./verification/index.ts";
import type { WorkspaceService } from "./workspaces/index.ts";

export interface Services {
  auth: RootKeyAuthenticator;
  workspaces: WorkspaceService;
  apis: ApiService;
  keys: KeyService;
  verification: VerificationService;
}
