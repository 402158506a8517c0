/**
 * The part of @writ/runtime that runs in any JavaScript engine: no Node built-in, no native module. The IR, its
 * evaluation and explanation, strict JSON, canonical JSON and the signals schema's validator. The index re-exports
 * all of it; a browser bundle (the playground, docs/playground.md) maps `@writ/runtime` to this file, so using
 * anything else there fails its build.
 */
export * from "./errors.js";
export * from "./ir/types.js";
export * from "./ir/operators.js";
export { UNKNOWN, COMPARISON_DOMAINS, codePointLength, isScalar, type Value } from "./ir/values.js";
export { preparePolicy, prepareExpression, requiredNow, UNDECIDED, type Decision, type PreparedPolicy } from "./ir/evaluate.js";
export { FAULTS, FAULT_CODES, EvaluationFaultSignal, canFault, type FaultCode, type EvaluationFault } from "./ir/faults.js";
export { MAX_DECLARED_PLACES, MAX_MAGNITUDE, decimalText, placesOf, unitsOf } from "./ir/exact.js";
export { decimalPlaces } from "./ir/scale.js";
export {
  explain,
  written as expressionText,
  type Explained,
  type Explanation,
  type ExplainedExpr,
  type ExplainedRule,
  type Truth,
} from "./ir/explain.js";
export { parseStrictJson, type StrictParseOptions } from "./json/strict-parse.js";
export { carriesExactly } from "./json/exact-number.js";
export { copyLossyNumbers, lossyNumbersOf } from "./json/lossy-numbers.js";
export { canonicalJson, canonicalBytes } from "./canonical/jcs.js";
export { TIMESTAMP_PATTERN, isTimestamp } from "./signals/timestamp.js";
export { isSemver, semverKey } from "./signals/semver.js";
export {
  DURATION_UNITS,
  INSTANT_LIMIT,
  MAX_DECISION_INSTANT,
  MAX_INSTANT,
  MIN_DECISION_INSTANT,
  MIN_INSTANT,
  DECISION_INSTANT_FORM,
  decisionInstant,
  durationText,
  parseDecisionInstant,
  instantText,
  isDurationUnit,
  type DurationUnit,
} from "./ir/time.js";
export { readsNow } from "./ir/reads-now.js";
export { irOperands } from "./ir/operands.js";
export { ZONE_HORIZON, offsetAt, offsetText, prepareZones, type ZoneTable } from "./ir/zones.js";
export { hourOfDay, isoWeekday, localMs, minuteOfDay } from "./ir/local-time.js";
export { cidrSpan, ipAddress, isCidr, isIpAddress, type IpSpan } from "./signals/ip.js";
export {
  compileLinearRegExp,
  linearPatternRefusal,
  linearRegExpEngine,
  LinearRegExp,
  MAX_NFA_STATES,
  type MatcherWork,
} from "./regex/linear-regexp.js";
export { createSignalValidator, type SignalError, type SignalValidation, type SignalValidator } from "./signals/validate.js";
