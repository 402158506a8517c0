export { ConfigError, DEFAULT_DATABASE, loadConfig, type ApiKeys, type Env, type SidecarConfig } from "./config.js";
export { openContext, type SidecarContext } from "./context.js";
export { startSidecar, type RunningSidecar } from "./sidecar.js";
export { buildSurfaceA } from "./surface-a/app.js";
export { buildSurfaceB } from "./surface-b/app.js";
export { createMetrics, type Metrics } from "./metrics.js";
export type * from "./audit/types.js";
export type * from "./surface-b/types.js";
