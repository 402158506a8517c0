export {
  ConfigError,
  DEFAULT_DATABASE,
  loadConfig,
  type ApiKeys,
  type Env,
  type LogLevel,
  type SidecarConfig,
  type TracingConfig,
} from "./config.js";
export { openContext, type ContextOptions, type SidecarContext } from "./context.js";
export { createLogger, type Logger } from "./observability/logger.js";
export { startSidecar, type RunningSidecar } from "./sidecar.js";
export { buildSurfaceA } from "./surface-a/app.js";
export { buildSurfaceB } from "./surface-b/app.js";
export { createMetrics, type Metrics } from "./metrics.js";
export type * from "./audit/types.js";
export type * from "./surface-b/types.js";
