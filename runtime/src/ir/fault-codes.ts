/** The evaluation faults (faults.ts), by code: what each is, in words a refusal and an explanation use (`/` and `%` by zero: EVAL-001). */
export const FAULTS = {
  "EVAL-001": "division by zero",
  "EVAL-002": "result out of range (beyond ±9007199254740991)",
  "EVAL-003": "result underflows to zero",
  "EVAL-004": "instant outside the zone table's horizon",
} as const;

export type FaultCode = keyof typeof FAULTS;
/** The fault codes, for the lists of what a route that evaluates can answer. */
export const FAULT_CODES = Object.keys(FAULTS) as readonly FaultCode[];
