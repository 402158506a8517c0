import { readFileSync } from "node:fs";
import type { PolicyVersion } from "../../../src/diff/space.js";
import type { SignalsSchema } from "../../../src/diff/signal-domain.js";
import { compile } from "../../../src/compile.js";

/** A policy source compiled as `writ diff` reads it: its IR and its signals schema. Throws when it does not compile. */
export function versionOf(source: string, path = "policy.writ"): PolicyVersion {
  const r = compile(path, source);
  if (!r.valid || !r.ir || !r.bundle) throw new Error(`${path} does not compile: ${r.errors.map((d) => d.message).join("; ")}`);
  return { ir: r.ir, schema: JSON.parse(new TextDecoder().decode(r.bundle.files.get("signals.schema.json")!)) as SignalsSchema };
}

export function shippedSource(path: string): string {
  return readFileSync(new URL(`../../../../${path}`, import.meta.url), "utf8");
}

/** A small policy: its signals, its rules, and a catch-all. */
export const small = (signals: string, rules: string): string =>
  `policy "p" version "1.0.0"\ngoverns "a"\nsignals {\n${signals}\n}\n${rules}\notherwise approve "ok"\n`;
