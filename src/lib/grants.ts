/**
 * Root-key grant matching, `<resource>.<id>.<action>`: `*` in the id position of a grant matches
 * every id, `apis` names the same resource as `api`, a bare `*` grants nothing. Imports nothing, so
 * the console's browser bundle uses this very matcher to hide what the server would refuse.
 */

/** Normalises stored grants: `apis.x.y` also grants `api.x.y`. */
export function normaliseGrants(grants: readonly string[]): Set<string> {
  const set = new Set<string>();
  for (const g of grants) {
    set.add(g);
    if (g.startsWith("apis.")) set.add(`api.${g.slice(5)}`);
  }
  return set;
}

/** Whether normalised `grants` hold `<resource>.<id>.<action>`, directly or through `<resource>.*.<action>`. */
export function grantsAllow(grants: ReadonlySet<string>, resource: string, id: string, action: string): boolean {
  return grants.has(`${resource}.*.${action}`) || grants.has(`${resource}.${id}.${action}`);
}
