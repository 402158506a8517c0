import { emit } from "./emit.js";
import type { Phase } from "./pipeline.js";
import { PHASES_TO_IR } from "./to-ir.js";

export { PHASES_TO_IR } from "./to-ir.js";
export { runPhases, type Phase, type PhaseName, type PipelineOptions, type PipelineRun, type PipelineState } from "./pipeline.js";

/** The eight phases, in order, as data (docs/compiler.md describes each): the seven to the IR, then emit. */
export const PHASES: readonly Phase[] = [
  ...PHASES_TO_IR,
  {
    name: "emit",
    guarantee: "the bundle's hashes match its bytes, and the same source and key give the same bytes",
    after: ["lower"],
    haltOnError: true,
    run: (ctx, s, options) => {
      s.bundle = emit(ctx, s.ast!, s.ir!, options);
    },
  },
];
