/**
 * `@writ/runtime/replay-store`: what the author of a ReplayStore on another engine needs (docs/replay.md, "Writing a
 * replay store"). The lifecycle of an execution (spec 2.12) is decided here, once, as pure functions of the stored
 * entry: `check*` validates a call's arguments, `decide*` computes the transition an operation makes on the entry it
 * read; a store reads the entry, decides, and writes the result atomically with the transition's record. A store
 * so keeps no rule of its own, and passes the contract suite of `@writ/runtime/testing`.
 */
export {
  MAX_FINGERPRINT_BYTES,
  checkApproved,
  checkFailedTtl,
  checkFingerprint,
  checkNow,
  checkReserveTtl,
  checkToken,
  decideConfirm,
  decideConsume,
  decideFail,
  decideMarkPendingOverride,
  decideReserve,
  decideResolveOverride,
  decideStartExecution,
  isExpired,
  makeEntry,
  normalizeContext,
  parseStoredEntry,
  type Transition,
} from "./replay/lifecycle.js";
export { recordFingerprint, recordJson } from "./replay/records.js";
