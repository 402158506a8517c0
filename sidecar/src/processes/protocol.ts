/**
 * The messages between a sidecar's processes and their supervisor (supervisor.ts) over node:cluster's channel: a
 * process says it serves, asks every other process to reload its bundles, and asks for the metrics of all of them.
 */
export type ProcessMessage =
  | { readonly type: "serving" }
  | { readonly type: "reload" }
  | { readonly type: "metrics"; readonly id: number }
  | { readonly type: "metrics-text"; readonly id: number; readonly text: string }
  | { readonly type: "metrics-text"; readonly id: number; readonly error: string };

const TYPES: ReadonlySet<string> = new Set(["serving", "reload", "metrics", "metrics-text"]);

export function isProcessMessage(message: unknown): message is ProcessMessage {
  return typeof message === "object" && message !== null && TYPES.has((message as { type?: unknown }).type as string);
}
