/** Shapes every part of the wire shares: signal values, open JSON objects and the decision vocabulary (spec 3). */

/** Signal values: facts about one execution, an object of structured scalar values (spec 2.3). */
export type Signals = Readonly<Record<string, unknown>>;

/** A JSON object whose members the wire leaves open (signal provenance, a `POST /transactions` section). */
export type JsonObject = Readonly<Record<string, unknown>>;

/** A policy verdict: `approve`, `escalate` (waits for a human) or `reject`. Only `approve` authorizes. */
export type Verdict = "approve" | "escalate" | "reject";

/** The three response states (spec 3): `status` of an evaluation, `decision` of an audit row. */
export type DecisionStatus = "approved" | "pending_override" | "rejected";

/** An attestation's `execution_state` (spec 2.2): a rejection is `completed` too. */
export type ExecutionState = "completed" | "pending_override";
