/** Shapes every part of the wire shares: signal values, open JSON objects and the decision vocabulary (spec 3). */
import { Choice, OpenObject, type Static } from "./schema.js";

/** Signal values: facts about one execution, an object of structured scalar values (spec 2.3). */
export const Signals = OpenObject({
  title: "Signals",
  description:
    "Signal values: facts about one execution, an object of structured scalar values; their content is the policy's `signalsSchema`'s business.",
});
export type Signals = Static<typeof Signals>;

/** A JSON object whose members the wire leaves open (signal provenance, a `POST /transactions` section). */
export const JsonObject = OpenObject({ title: "JsonObject", description: "A JSON object whose members the wire leaves open." });
export type JsonObject = Static<typeof JsonObject>;

/** A policy verdict: `approve`, `escalate` (waits for a human) or `reject`. Only `approve` authorizes. */
export const Verdict = Choice(["approve", "escalate", "reject"], {
  title: "Verdict",
  description: "A policy verdict: `approve`, `escalate` (waits for a human) or `reject`. Only `approve` authorizes.",
});
export type Verdict = Static<typeof Verdict>;

/** The three response states (spec 3): `status` of an evaluation, `decision` of an audit row. */
export const DecisionStatus = Choice(["approved", "pending_override", "rejected"], {
  title: "DecisionStatus",
  description: "The three response states: `status` of an evaluation, `decision` of an audit row.",
});
export type DecisionStatus = Static<typeof DecisionStatus>;

/** An attestation's `execution_state` (spec 2.2): a rejection is `completed` too. */
export const ExecutionState = Choice(["completed", "pending_override"], {
  title: "ExecutionState",
  description: "An attestation's `execution_state`: a rejection is `completed` too.",
});
export type ExecutionState = Static<typeof ExecutionState>;
