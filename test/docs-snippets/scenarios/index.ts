/**
 * Every scenario: together they run each shell block of the docs that test/docs-snippets/skipped.ts does not skip.
 * They run concurrently, the longest first: the author's eleven `npx writ` in a row are the longest chain.
 */
import type { Scenario } from "../types.js";
import { author } from "./author.js";
import { bundlesSource, readmeBundleSource } from "./bundle-source.js";
import { conformance } from "./conformance.js";
import { devSidecar } from "./dev-sidecar.js";
import { docsFleet, readmeFleet } from "./fleet.js";
import { typegen } from "./typegen.js";

export const SCENARIOS: readonly Scenario[] = [
  author,
  conformance,
  readmeFleet,
  docsFleet,
  bundlesSource,
  readmeBundleSource,
  devSidecar,
  typegen,
];
