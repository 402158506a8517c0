/**
 * A deliberate regression, loaded into the sidecar by budget.stress.test.ts (BENCH_BUDGET_IMPORT): every
 * `JSON.stringify` and every `JSON.parse` is done five times, as code that serialized and read each record and answer
 * again would do. bench:budget must refuse it. (Three stringifies were +7.9% on 2026-11-28; once the attestation was
 * serialized once, they were +2 to +3%: too near the 3% margin to show anything.)
 */
const stringify = JSON.stringify;
const parse = JSON.parse;
const TIMES = 5;

JSON.stringify = function stringifiedFiveTimes(...args) {
  for (let i = 1; i < TIMES; i++) stringify.apply(this, args);
  return stringify.apply(this, args);
};
JSON.parse = function parsedFiveTimes(...args) {
  for (let i = 1; i < TIMES; i++) parse.apply(this, args);
  return parse.apply(this, args);
};
