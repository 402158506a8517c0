/**
 * The decisions of conformance/vectors/decisions.json, written by hand from issue 39's findings (and issue 41's): each a fixture policy
 * (conformance/fixtures/policies/conformance.<policy>/1.0.0), the signals as JSON text, and what any implementation
 * must answer. decision-vectors.ts compiles them, checks this runtime answers so, and writes the vectors; the CLI,
 * sidecar, SDK and playground tests decide them too.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FaultCode } from "@writ/runtime";

export type ExpectedDecision =
  | { readonly outcome: "decided"; readonly verdict: "approve" | "escalate" | "reject"; readonly ruleMatched: string }
  | { readonly outcome: "invalid"; readonly codes: readonly string[] }
  | { readonly outcome: "fault"; readonly code: FaultCode; readonly rule: string };

export interface DecisionCase {
  readonly id: string;
  readonly description: string;
  /** The fixture policy `conformance.<policy>@1.0.0`. */
  readonly policy: string;
  readonly signals: string;
  /**
   * The decision instant the policy's `now` reads (RFC 3339), for a policy that reads it. A server decides at its own
   * clock, so the HTTP conformance case of such a vector is made only when `anyInstant`: it decides so at every instant
   * from 2000 to 9998 (decision-vectors.ts checks it does).
   */
  readonly now?: string;
  readonly anyInstant?: true;
  readonly expected: ExpectedDecision;
}

const FIXTURES = fileURLToPath(new URL("../../conformance/fixtures/policies/", import.meta.url));

/** The source of fixture policy `conformance.<name>@1.0.0`, which a conformance run loads beside the others. */
export function fixtureSource(name: string): string {
  return readFileSync(join(FIXTURES, `conformance.${name}`, "1.0.0", "policy.writ"), "utf8");
}

export const CASES: readonly DecisionCase[] = [
  {
    id: "decimal-sum-at-the-limit",
    description: "1000.10 + 0.20 is 1000.30 exactly, not over a limit of 1000.30 (as doubles, 1000.3000000000001 is)",
    policy: "money",
    signals: '{"daily_total": 1000.10, "amount": 0.20}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "otherwise" },
  },
  {
    id: "decimal-sum-a-cent-over",
    description: "1000.10 + 0.21 is over 1000.30",
    policy: "money",
    signals: '{"daily_total": 1000.10, "amount": 0.21}',
    expected: { outcome: "decided", verdict: "escalate", ruleMatched: "over_limit" },
  },
  {
    id: "decimal-more-places-than-declared",
    description: "an amount with 3 places for a decimal(2) is refused, not rounded",
    policy: "money",
    signals: '{"daily_total": 0, "amount": 1000.125}',
    expected: { outcome: "invalid", codes: ["VAL-012"] },
  },
  {
    id: "decimal-more-digits-than-a-double",
    description: "25000.000000000001 would be read as 25000 by a double: refused, not approved as 25000",
    policy: "money",
    signals: '{"daily_total": 0, "amount": 25000.000000000001}',
    expected: { outcome: "invalid", codes: ["VAL-012"] },
  },
  {
    id: "decimal-product-exact",
    description: "0.29 * 100 is 29 exactly (as doubles, 28.999999999999996)",
    policy: "cents",
    signals: '{"amount": 0.29}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "enough" },
  },
  {
    id: "decimal-tenths",
    description: "0.1 + 0.2 is 0.3 exactly, not over 0.3 (as doubles, 0.30000000000000004 is)",
    policy: "tenths",
    signals: '{"a": 0.1, "b": 0.2}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "otherwise" },
  },
  {
    id: "number-more-digits-than-a-double",
    description: "a number signal written with more digits than a double holds is refused, not read as 25000",
    policy: "doubles",
    signals: '{"amount": 25000.000000000001}',
    expected: { outcome: "invalid", codes: ["VAL-007"] },
  },
  {
    id: "integer-past-the-exact-range",
    description: "9007199254740991 + 2 is beyond ±(2^53 - 1): a fault, not the rounded 9007199254740992 that approved",
    policy: "minor",
    signals: '{"balance_minor": 9007199254740991, "credit_minor": 2, "debit_minor": 3}',
    expected: { outcome: "fault", code: "EVAL-002", rule: "covered" },
  },
  {
    id: "integer-within-the-exact-range",
    description: "9007199254740988 + 2 - 3 is exact and not covered",
    policy: "minor",
    signals: '{"balance_minor": 9007199254740988, "credit_minor": 2, "debit_minor": 3}',
    expected: { outcome: "decided", verdict: "reject", ruleMatched: "otherwise" },
  },
  {
    id: "division-by-zero",
    description: "a zero balance faults the rule that divides by it, instead of skipping it so that the catch-all approves",
    policy: "divide",
    signals: '{"amount": 100, "balance": 0}',
    expected: { outcome: "fault", code: "EVAL-001", rule: "most_of_balance" },
  },
  {
    id: "division-ordinary",
    description: "a balance that is not zero divides",
    policy: "divide",
    signals: '{"amount": 100, "balance": 1000}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "otherwise" },
  },
  {
    id: "division-out-of-range",
    description: "1 / 1e-300 is beyond ±(2^53 - 1): a fault",
    policy: "tiny",
    signals: '{"x": 1}',
    expected: { outcome: "fault", code: "EVAL-002", rule: "huge" },
  },
  {
    id: "division-guarded",
    description: "a false operand of `and` absorbs the fault of another: the guarded division does not fault",
    policy: "guarded",
    signals: '{"amount": 100, "balance": 0}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "otherwise" },
  },
  {
    id: "lower-folds-ascii",
    description: "lower() folds A-Z: an upper-case domain is the same domain",
    policy: "corp",
    signals: '{"email": "mallory@CORP.EXAMPLE"}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "corporate" },
  },
  {
    id: "normalized-refuses-decomposed",
    description: "a normalized signal refuses text not in NFC: café royal written with a combining accent cannot pass as an unknown payee",
    policy: "payee",
    signals: '{"payee": "cafe\\u0301 royal"}',
    expected: { outcome: "invalid", codes: ["VAL-012"] },
  },
  {
    id: "normalized-accepts-nfc",
    description: "the same payee in NFC is the known one",
    policy: "payee",
    signals: '{"payee": "caf\\u00e9 royal"}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "known" },
  },
  {
    id: "regex-hostile-refused",
    description:
      "a hostile memo against /^(a+)+$/: refused by the schema in linear time (a backtracking engine takes longer than a person waits)",
    policy: "memo",
    signals: `{"memo": "${"a".repeat(40)}!"}`,
    expected: { outcome: "invalid", codes: ["VAL-012"] },
  },
  {
    id: "regex-hostile-decided",
    description: "63 a's against /(a|a)*b/: decided in linear time, no b",
    policy: "memo",
    signals: `{"memo": "${"a".repeat(63)}"}`,
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "otherwise" },
  },
  // Issue 41: `%`, `abs`, `min`, `max`.
  {
    id: "remainder-round",
    description: "3000.00 % 1000 is 0: a round amount",
    policy: "remainder",
    signals: '{"amount": 3000, "lots": 4, "change": 0}',
    expected: { outcome: "decided", verdict: "escalate", ruleMatched: "round_thousand" },
  },
  {
    id: "remainder-decimal-exact",
    description: "0.30 % 0.10 is 0 exactly (as doubles, 0.09999999999999998)",
    policy: "remainder",
    signals: '{"amount": 0.3, "lots": 0, "change": 0}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "whole_dimes" },
  },
  {
    id: "remainder-by-zero",
    description: "1000.01 % 0 is a fault (EVAL-001), not a remainder and not an approval",
    policy: "remainder",
    signals: '{"amount": 1000.01, "lots": 0, "change": 0}',
    expected: { outcome: "fault", code: "EVAL-001", rule: "split_evenly" },
  },
  {
    id: "remainder-truncated-sign",
    description: "-10 % 7 is -3 (truncated division, the sign of the dividend; floored division would give 4)",
    policy: "remainder",
    signals: '{"amount": 1000.10, "lots": 3, "change": -10}',
    expected: { outcome: "decided", verdict: "reject", ruleMatched: "negative_remainder" },
  },
  {
    id: "remainder-uneven",
    description: "1000.50 % 3 is 1.50 and 10 % 7 is 3: no rule",
    policy: "remainder",
    signals: '{"amount": 1000.50, "lots": 3, "change": 10}',
    expected: { outcome: "decided", verdict: "reject", ruleMatched: "otherwise" },
  },
  {
    id: "abs-negative",
    description: "abs(-501) is 501, over 500",
    policy: "bounds",
    signals: '{"amount": 10, "daily_total": 10, "balance_change": -501}',
    expected: { outcome: "decided", verdict: "escalate", ruleMatched: "swing" },
  },
  {
    id: "abs-largest-integer",
    description: "abs(-9007199254740991) is 9007199254740991, in range: no fault",
    policy: "bounds",
    signals: '{"amount": 10, "daily_total": 10, "balance_change": -9007199254740991}',
    expected: { outcome: "decided", verdict: "escalate", ruleMatched: "swing" },
  },
  {
    id: "max-over-limit",
    description: "max(25000.01, 100.00) is over 25000.00",
    policy: "bounds",
    signals: '{"amount": 25000.01, "daily_total": 100, "balance_change": 500}',
    expected: { outcome: "decided", verdict: "escalate", ruleMatched: "over_limit" },
  },
  {
    id: "max-at-limit",
    description: "max(25000.00, 25000.00) is not over 25000.00",
    policy: "bounds",
    signals: '{"amount": 25000, "daily_total": 25000.00, "balance_change": -500}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "otherwise" },
  },
  {
    id: "min-zero",
    description: "min(12.50, 0.00) is 0",
    policy: "bounds",
    signals: '{"amount": 12.5, "daily_total": 0, "balance_change": 0}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "first_today" },
  },
  // Issue 41: `semver` signals, by SemVer 2.0.0 precedence.
  {
    id: "semver-pre-release-before-release",
    description: "2.4.0-rc.1 precedes 2.4.0: older than 2.4.0",
    policy: "versions",
    signals: '{"client_version": "2.4.0-rc.1"}',
    expected: { outcome: "decided", verdict: "escalate", ruleMatched: "outdated" },
  },
  {
    id: "semver-release",
    description: "2.4.0 is not older than 2.4.0",
    policy: "versions",
    signals: '{"client_version": "2.4.0"}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "otherwise" },
  },
  {
    id: "semver-numbers-not-text",
    description: "2.10.0 follows 2.9.0 (numbers compare as numbers, not as text)",
    policy: "versions",
    signals: '{"client_version": "2.10.0"}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "otherwise" },
  },
  {
    id: "semver-build-metadata-ignored",
    description: "2.3.1+build.9 has the precedence of 2.3.1, a blocked version",
    policy: "versions",
    signals: '{"client_version": "2.3.1+build.9"}',
    expected: { outcome: "decided", verdict: "reject", ruleMatched: "blocked" },
  },
  {
    id: "semver-pre-release-identifiers",
    description: "3.0.0-alpha follows 3.0.0-0 (a word follows a number), so it is a 3.x preview",
    policy: "versions",
    signals: '{"client_version": "3.0.0-alpha"}',
    expected: { outcome: "decided", verdict: "reject", ruleMatched: "preview" },
  },
  {
    id: "semver-v-prefix-refused",
    description: "v2.4.0 is not SemVer 2.0.0 text: refused (VAL-013), not read as 2.4.0",
    policy: "versions",
    signals: '{"client_version": "v2.4.0"}',
    expected: { outcome: "invalid", codes: ["VAL-013"] },
  },
  {
    id: "semver-two-numbers-refused",
    description: "2.4 is not a version (three numbers are required): refused (VAL-013)",
    policy: "versions",
    signals: '{"client_version": "2.4"}',
    expected: { outcome: "invalid", codes: ["VAL-013"] },
  },
  {
    id: "semver-number-beyond-2-53-refused",
    description: "a pre-release number beyond 9007199254740991 is refused (VAL-013), not compared as text",
    policy: "versions",
    signals: '{"client_version": "2.4.0-9007199254740993"}',
    expected: { outcome: "invalid", codes: ["VAL-013"] },
  },
  {
    id: "semver-not-a-string",
    description: "a version sent as a number is refused (VAL-006)",
    policy: "versions",
    signals: '{"client_version": 2.4}',
    expected: { outcome: "invalid", codes: ["VAL-006"] },
  },
  // Issue 41: `ip` signals and `in_cidr`.
  {
    id: "ip-v4-in-range",
    description: "10.20.30.40 is in 10.0.0.0/8",
    policy: "networks",
    signals: '{"client_ip": "10.20.30.40"}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "office" },
  },
  {
    id: "ip-v6-in-range",
    description: "2001:DB8:0:0:1::5 (any spelling) is in 2001:db8::/32",
    policy: "networks",
    signals: '{"client_ip": "2001:DB8:0:0:1::5"}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "office" },
  },
  {
    id: "ip-v4-mapped-in-v4-range",
    description: "::ffff:10.1.2.3, how a dual-stack socket reports 10.1.2.3, is in 10.0.0.0/8",
    policy: "networks",
    signals: '{"client_ip": "::ffff:10.1.2.3"}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "office" },
  },
  {
    id: "ip-v4-in-mapped-range",
    description: "192.0.2.9 is in ::ffff:192.0.2.0/120, the mapped form of 192.0.2.0/24: not outside",
    policy: "networks",
    signals: '{"client_ip": "192.0.2.9"}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "otherwise" },
  },
  {
    id: "ip-outside",
    description: "11.0.0.1 is in none of the ranges",
    policy: "networks",
    signals: '{"client_ip": "11.0.0.1"}',
    expected: { outcome: "decided", verdict: "escalate", ruleMatched: "outside" },
  },
  {
    id: "ip-equal-address",
    description: "203.0.113.7 is the blocked address",
    policy: "networks",
    signals: '{"client_ip": "203.0.113.7"}',
    expected: { outcome: "decided", verdict: "reject", ruleMatched: "blocked" },
  },
  {
    id: "ip-leading-zero-refused",
    description: "010.0.0.1 is refused (VAL-014): a leading zero can mean octal, so 8.0.0.1 to some readers",
    policy: "networks",
    signals: '{"client_ip": "010.0.0.1"}',
    expected: { outcome: "invalid", codes: ["VAL-014"] },
  },
  {
    id: "ip-zone-refused",
    description: "fe80::1%eth0 is refused (VAL-014): a zone names an interface of one host, not a network address",
    policy: "networks",
    signals: '{"client_ip": "fe80::1%eth0"}',
    expected: { outcome: "invalid", codes: ["VAL-014"] },
  },
  {
    id: "ip-not-an-address",
    description: "a host name is refused (VAL-014)",
    policy: "networks",
    signals: '{"client_ip": "office.example"}',
    expected: { outcome: "invalid", codes: ["VAL-014"] },
  },
  {
    id: "duration-a-millisecond-inside",
    description: "opened 30 days less a millisecond before the request: inside `account_opened_at + 30d`",
    policy: "durations",
    signals: '{"amount": 1000, "requested_at": "2026-03-30T23:59:59.999Z", "account_opened_at": "2026-03-01T00:00:00Z"}',
    expected: { outcome: "decided", verdict: "escalate", ruleMatched: "new_account" },
  },
  {
    id: "duration-at-the-thirtieth-day",
    description: "exactly 30 days of 86,400,000 ms after opening is not before `account_opened_at + 30d`",
    policy: "durations",
    signals: '{"amount": 1000, "requested_at": "2026-03-31T00:00:00Z", "account_opened_at": "2026-03-01T00:00:00Z"}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "otherwise" },
  },
  {
    id: "duration-offsets-are-instants",
    description: "00:59:59+01:00 on the thirtieth day is 23:59:59Z the day before: still inside the 30 days",
    policy: "durations",
    signals: '{"amount": 1000, "requested_at": "2026-03-31T00:59:59+01:00", "account_opened_at": "2026-03-01T00:00:00Z"}',
    expected: { outcome: "decided", verdict: "escalate", ruleMatched: "new_account" },
  },
  {
    id: "duration-between-timestamps",
    description: "`requested_at - account_opened_at` is 36500 days, 15 minutes and a second: a duration over a duration",
    policy: "durations",
    signals: '{"amount": 5, "requested_at": "2026-03-01T00:15:01Z", "account_opened_at": "1926-03-26T00:00:00Z"}',
    expected: { outcome: "decided", verdict: "reject", ruleMatched: "stale" },
  },
  {
    id: "duration-past-year-9999",
    description: "`account_opened_at + 30d` past 9999-12-31 is an instant still, not a fault: the request is before it",
    policy: "durations",
    signals: '{"amount": 1000, "requested_at": "9999-12-31T00:00:00Z", "account_opened_at": "9999-12-30T00:00:00Z"}',
    expected: { outcome: "decided", verdict: "escalate", ruleMatched: "new_account" },
  },
  {
    id: "now-inside-the-window",
    description: "`now` is the decision instant: at 12:00 a deadline at 17:00 is neither past nor within the 15-minute grace",
    policy: "now",
    now: "2026-06-01T12:00:00Z",
    signals: '{"amount": 500, "deadline": "2026-06-01T17:00:00Z", "account_opened_at": "2025-01-01T00:00:00Z"}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "otherwise" },
  },
  {
    id: "now-at-the-grace-edge",
    description: "`now + 15m > deadline` at 16:45:00 exactly is false: the grace period starts a millisecond later",
    policy: "now",
    now: "2026-06-01T16:45:00Z",
    signals: '{"amount": 500, "deadline": "2026-06-01T17:00:00Z", "account_opened_at": "2025-01-01T00:00:00Z"}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "otherwise" },
  },
  {
    id: "now-within-the-grace",
    description: "at 16:45:00.001 `now + 15m` is past the deadline",
    policy: "now",
    now: "2026-06-01T16:45:00.001Z",
    signals: '{"amount": 500, "deadline": "2026-06-01T17:00:00Z", "account_opened_at": "2025-01-01T00:00:00Z"}',
    expected: { outcome: "decided", verdict: "reject", ruleMatched: "closing_soon" },
  },
  {
    id: "now-offset-is-an-instant",
    description: "a decision instant of 19:00:01+02:00 is 17:00:01Z: `now > deadline`",
    policy: "now",
    now: "2026-06-01T19:00:01+02:00",
    signals: '{"amount": 500, "deadline": "2026-06-01T17:00:00Z", "account_opened_at": "2025-01-01T00:00:00Z"}',
    expected: { outcome: "decided", verdict: "escalate", ruleMatched: "after_hours_window" },
  },
  {
    id: "now-a-new-account",
    description: "`now - account_opened_at` a millisecond under 30 days is `< 30d`",
    policy: "now",
    now: "2026-06-01T12:00:00Z",
    signals: '{"amount": 1000, "deadline": "2026-06-02T00:00:00Z", "account_opened_at": "2026-05-02T12:00:00.001Z"}',
    expected: { outcome: "decided", verdict: "escalate", ruleMatched: "new_account" },
  },
  {
    id: "now-the-thirtieth-day",
    description: "`now - account_opened_at` of exactly 30 days is not `< 30d`",
    policy: "now",
    now: "2026-06-01T12:00:00Z",
    signals: '{"amount": 1000, "deadline": "2026-06-02T00:00:00Z", "account_opened_at": "2026-05-02T12:00:00Z"}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "otherwise" },
  },
  {
    id: "now-past-a-deadline-of-1999",
    description: "a deadline in 1999 is past at any instant a server's clock can show since 2000",
    policy: "now",
    now: "2026-06-01T12:00:00Z",
    anyInstant: true,
    signals: '{"amount": 500, "deadline": "1999-12-31T23:59:59Z", "account_opened_at": "1990-01-01T00:00:00Z"}',
    expected: { outcome: "decided", verdict: "escalate", ruleMatched: "after_hours_window" },
  },
  {
    id: "now-before-an-opening-in-9999",
    description: "an account opened in 9999 is less than 30 days old (a negative duration) at any earlier instant",
    policy: "now",
    now: "2026-06-01T12:00:00Z",
    anyInstant: true,
    signals: '{"amount": 1000, "deadline": "9999-12-31T00:00:00Z", "account_opened_at": "9999-01-01T00:00:00Z"}',
    expected: { outcome: "decided", verdict: "escalate", ruleMatched: "new_account" },
  },
  {
    id: "zone-weekday-is-local",
    description: "Friday 23:30 UTC in June is Saturday 00:30 in London (UTC+01:00): the weekday is the zone's",
    policy: "zones",
    signals: '{"requested_at": "2026-06-05T23:30:00Z"}',
    expected: { outcome: "decided", verdict: "reject", ruleMatched: "weekend" },
  },
  {
    id: "zone-before-the-clocks-go-forward",
    description: "13:30 UTC on Friday 6 March 2026 is 08:30 in New York (UTC-05:00): before business hours",
    policy: "zones",
    signals: '{"requested_at": "2026-03-06T13:30:00Z"}',
    expected: { outcome: "decided", verdict: "escalate", ruleMatched: "after_hours" },
  },
  {
    id: "zone-after-the-clocks-go-forward",
    description: "13:30 UTC on Monday 9 March 2026 is 09:30 in New York (UTC-04:00 since 8 March): within business hours",
    policy: "zones",
    signals: '{"requested_at": "2026-03-09T13:30:00Z"}',
    expected: { outcome: "decided", verdict: "approve", ruleMatched: "otherwise" },
  },
  {
    id: "zone-minute-of-day-in-summer-time",
    description: "11:30 UTC on Wednesday 3 June 2026 is 12:30 in London (minute 750 of the day): lunch",
    policy: "zones",
    signals: '{"requested_at": "2026-06-03T11:30:00Z"}',
    expected: { outcome: "decided", verdict: "escalate", ruleMatched: "lunch" },
  },
  {
    id: "zone-beyond-the-horizon",
    description: "2100-01-01T00:00:00Z is past the zone tables' horizon: a fault (EVAL-004), never a verdict",
    policy: "zones",
    signals: '{"requested_at": "2100-01-01T00:00:00Z"}',
    expected: { outcome: "fault", code: "EVAL-004", rule: "weekend" },
  },
];

/**
 * Bundles no runtime may load: conformance.memo's with one pattern replaced by one that no linear-time engine matches,
 * in the IR (`matches`) or in the signals schema (`pattern`). `construct` is what the refusal names.
 */
export const REFUSALS: readonly {
  readonly id: string;
  readonly description: string;
  readonly in: "ir" | "schema";
  readonly pattern: string;
  readonly construct: string;
}[] = [
  {
    id: "regex-backreference-in-ir",
    description: "a `matches` with a backreference, which no linear-time engine matches: the bundle is refused when it is loaded",
    in: "ir",
    pattern: "^(a+)\\1$",
    construct: "\\1",
  },
  {
    id: "regex-lookahead-in-schema",
    description: "a schema `pattern` whose lookahead is more than one character: the bundle is refused when it is loaded",
    in: "schema",
    pattern: "^(?=(a+)+$)",
    construct: "(?=(a+)+$)",
  },
];
