/**
 * `@writ/runtime/testing`: the contract suite every ReplayStore passes (docs/replay.md, "Writing a replay store"),
 * for a store outside this package to run as the runtime's own stores do. It needs vitest, an optional peer
 * dependency: nothing else of the runtime loads this entry.
 */
export { replayStoreContract } from "./testing/replay-contract.js";
export { decisionRecord, overrideRecord, into, ok, T0, type StoreHarness } from "./testing/replay-contract-support.js";
