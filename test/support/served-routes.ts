/**
 * Every method and path an app serves: Elysia's routes and the operations Bun's router answers
 * through the pipeline (`serve.routes`), which Elysia's `app.routes` does not list.
 */
import type { App } from "../../src/app.ts";

export interface ServedRoute {
  method: string;
  path: string;
}

export function servedRoutes(app: App): ServedRoute[] {
  const pipelined = Object.entries(app.config.serve?.routes ?? {}).flatMap(([path, methods]) => Object.keys(methods as object).map((method) => ({ method, path })));
  return [...app.routes.map(({ method, path }) => ({ method, path })), ...pipelined];
}
