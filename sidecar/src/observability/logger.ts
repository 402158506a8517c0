/**
 * The sidecar's one log stream (docs/sidecar.md, "Logs"): pino JSON lines on stdout, one root logger per process that
 * both surfaces, the stores and the process itself log through.
 */
import { pino, stdTimeFunctions, type DestinationStream, type Logger } from "pino";

export type { Logger };

/** `SERVICE_LOG_LEVEL`'s values, pino's levels. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `destination`: where the lines go; stdout (written synchronously, so a line is whole before the process exits). */
export function createLogger(level: LogLevel = "info", destination?: DestinationStream): Logger {
  const options = {
    name: "writ-sidecar",
    level,
    timestamp: stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    // INVARIANT (no secrets in logs): the Bearer key never reaches a log line, whatever logs a request.
    redact: { paths: ["req.headers.authorization", "headers.authorization"], censor: "[redacted]" },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}

/**
 * The lines an operator always sees, whatever SERVICE_LOG_LEVEL says (unless `silent`): start-up notices, where the
 * surfaces listen, reloads and shutdown. They are written at `info` (or below, when the level is lower).
 */
export function lifecycleLog(log: Logger): Logger {
  if (log.level === "silent" || log.isLevelEnabled("info")) return log;
  return log.child({}, { level: "info" });
}
