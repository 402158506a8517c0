/** The routes a fastify instance serves, read from `printRoutes`. */
import type { FastifyInstance } from "fastify";

/** The routes `printRoutes` lists, as `METHOD /pattern` (its tree: four characters of indent per level). */
export function servedRoutes(tree: string): string[] {
  const stack: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split("\n")) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (match === null) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    const path = `${stack[depth - 1] ?? ""}${match[2]}`;
    stack.push(path);
    for (const method of match[3]?.split(", ") ?? []) routes.push(`${method} ${path}`);
  }
  return routes;
}

/** Every route `app` serves, as `METHOD /pattern`, once it is ready. */
export async function routesOf(app: FastifyInstance): Promise<string[]> {
  await app.ready();
  return servedRoutes(app.printRoutes({ commonPrefix: false }));
}
