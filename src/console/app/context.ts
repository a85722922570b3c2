/** What every page needs: the API client, who the root key is, its grants, and sign-out. */
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { ApiClient } from "./api/client.ts";
import type { Whoami } from "./api/routes.ts";
import type { Grants } from "./permissions.ts";

export interface Session {
  client: ApiClient;
  whoami: Whoami;
  grants: Grants;
  signOut(): void;
}

export const SessionContext = createContext<Session | undefined>(undefined);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside a signed-in console");
  return session;
}
