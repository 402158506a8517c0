/**
 * A deliberate regression, loaded into the sidecar by budget.stress.test.ts (BENCH_BUDGET_IMPORT): every
 * `JSON.stringify` is done three times, as code that serialized each answer again would do. bench:budget must refuse it.
 */
const stringify = JSON.stringify;
JSON.stringify = function stringifiedThrice(...args) {
  stringify.apply(this, args);
  stringify.apply(this, args);
  return stringify.apply(this, args);
};
