import type { SidecarContext } from "../context.js";
import type { TransactionPipeline } from "./pipeline.js";
import type { TrustRecordStore } from "../trust-records/record-store.js";

/** What Surface B's handlers are made with (http/route.ts), when the surface is built (app.ts). */
export interface SurfaceBDependencies {
  readonly ctx: SidecarContext;
  /** null without a record store: the routes that need it answer 503. */
  readonly records: TrustRecordStore | null;
  /** The pipeline of `POST /execute` and `POST /transactions`, made once for both (pipeline.ts). */
  readonly execute: TransactionPipeline;
}
