import type { SidecarContext } from "../context.js";
import type { Metrics } from "../metrics.js";
import type { OpenApiTexts } from "./document-routes.js";

/** What Surface A's handlers are made with (http/route.ts), when the surface is built (app.ts). */
export interface SurfaceADependencies extends OpenApiTexts {
  readonly ctx: SidecarContext;
  readonly metrics: Metrics;
}
