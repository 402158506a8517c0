/**
 * payments.transfer@1.2.0 as a Cerbos resource policy, plus the schema Cerbos validates the attributes with.
 *
 * Equivalence (checked end to end by `checkAgreement` in cerbos.ts, and structurally by `checkShape` below):
 * - writ decides by the first rule that fires; Cerbos denies when any DENY rule matches and allows only when an
 *   ALLOW rule matches and no DENY does. The only approving rule (within_limits) comes after every rejecting /
 *   escalating rule and `otherwise` escalates, so "first match is within_limits" is exactly "the ALLOW rule holds
 *   and no DENY rule does": each reject / escalate rule becomes a DENY rule, within_limits the ALLOW rule, and
 *   Cerbos's default deny plays `otherwise`. Cerbos ALLOW = writ approve; DENY = writ reject or escalate.
 * - numbers: Cerbos hands JSON attributes to CEL as doubles, and writ evaluates with JS numbers (doubles), so
 *   amounts go as they are (no minor units, unlike the Cedar peer in bench/runtime.ts) and the sums round alike;
 *   the constants are written as double literals so no comparison mixes int and double.
 * - `destination_account matches /^(CU|IR|KP|SY)[0-9]{2}/`: CEL `matches` is an unanchored RE2 search, as JS
 *   `RegExp.test` is; the pattern uses nothing on which RE2 and ECMAScript differ.
 * - the optional destination_country: writ's unknown never makes a rule fire; in CEL a missing key is an error,
 *   so every use is guarded by `has(...)`.
 *
 * What each side checks of the input: Cerbos validates `resource.attr` with the very JSON Schema writ's compiler
 * emits for the signals (types, required, closed object, enum, ranges, both patterns), with
 * `schema.enforcement: reject`, so an invalid set is denied with validation errors instead of being evaluated,
 * as writ refuses it with VAL codes. The validators differ (santhosh-tekuri/jsonschema and RE2 in Go, ajv and
 * ECMAScript regexes in writ) but agree on this schema: `checkAgreement` sends the test file's invalid sets too.
 * Beyond that writ also checks its request envelope (strict JSON, execution id, policy reference), which Cerbos
 * has no counterpart for; Cerbos checks the principal and resource envelope (kind, id, roles, actions).
 */
import { readFile } from "node:fs/promises";
import { compile } from "@writ/compiler";
import { BUNDLE_FILES, type PolicyIr } from "@writ/runtime";
import { POLICY_SOURCE } from "./policy-cases.js";

/** The Cerbos resource kind and action: the writ policy id and governed action (`checkShape` holds them equal). */
export const CERBOS_KIND = "payments.transfer";
export const CERBOS_ACTION = "transfer.execute";

const SCHEMA_FILE = `${CERBOS_KIND}.signals.json`;
const AUTO_CURRENCIES = `["USD", "EUR", "GBP"]`;

/** One Cerbos rule per writ rule, in writ's order, under the writ rule's id. `R.attr` is `request.resource.attr`. */
const RULES: Readonly<Record<string, { readonly effect: "EFFECT_ALLOW" | "EFFECT_DENY"; readonly expr: string }>> = {
  // destination_country in SANCTIONED or destination_account matches /^(CU|IR|KP|SY)[0-9]{2}/
  sanctioned: {
    effect: "EFFECT_DENY",
    expr:
      `(has(R.attr.destination_country) && R.attr.destination_country in ["CU", "IR", "KP", "SY"]) || ` +
      `R.attr.destination_account.matches("^(CU|IR|KP|SY)[0-9]{2}")`,
  },
  // risk_score > HIGH_RISK
  high_risk: { effect: "EFFECT_DENY", expr: "R.attr.risk_score > 80.0" },
  // not kyc_verified
  no_kyc: { effect: "EFFECT_DENY", expr: "!R.attr.kyc_verified" },
  // daily_total + amount > DAILY_LIMIT
  over_daily_limit: { effect: "EFFECT_DENY", expr: "R.attr.daily_total + R.attr.amount > 25000.0" },
  // account_age_days < 30 and amount >= 1000
  new_account: { effect: "EFFECT_DENY", expr: "R.attr.account_age_days < 30.0 && R.attr.amount >= 1000.0" },
  // amount > REVIEW_AMOUNT
  large: { effect: "EFFECT_DENY", expr: "R.attr.amount > 10000.0" },
  // not present(destination_country) and amount >= UNRESOLVED_LIMIT
  unresolved_destination: { effect: "EFFECT_DENY", expr: "!has(R.attr.destination_country) && R.attr.amount >= 5000.0" },
  // risk_score in ELEVATED_RISK..HIGH_RISK and currency not in AUTO_CURRENCIES
  elevated_risk: {
    effect: "EFFECT_DENY",
    expr: `R.attr.risk_score >= 60.0 && R.attr.risk_score <= 80.0 && !(R.attr.currency in ${AUTO_CURRENCIES})`,
  },
  // risk_score < ELEVATED_RISK and currency in AUTO_CURRENCIES
  within_limits: { effect: "EFFECT_ALLOW", expr: `R.attr.risk_score < 60.0 && R.attr.currency in ${AUTO_CURRENCIES}` },
};

/** Fails loudly unless the translation mirrors the IR: same rules, same order, deny-overrides equals first-match. */
function checkShape(ir: PolicyIr): void {
  if (ir.policyId !== CERBOS_KIND || ir.governs.action !== CERBOS_ACTION) {
    throw new Error(
      `Cerbos translation is stale: it is for ${CERBOS_KIND} / ${CERBOS_ACTION}, the policy is ${ir.policyId} / ${ir.governs.action}`,
    );
  }
  const ids = Object.keys(RULES);
  if (ids.join() !== ir.rules.map((r) => r.id).join()) {
    throw new Error(`Cerbos translation is stale: it has rules ${ids.join(", ")}; the IR has ${ir.rules.map((r) => r.id).join(", ")}`);
  }
  let seenApprove = false;
  for (const r of ir.rules) {
    const effect = RULES[r.id]!.effect;
    if (effect !== (r.verdict === "approve" ? "EFFECT_ALLOW" : "EFFECT_DENY"))
      throw new Error(`Cerbos rule ${r.id} is ${effect}, the writ rule ${r.verdict}s`);
    if (seenApprove && r.verdict !== "approve")
      throw new Error(`rule ${r.id} follows an approving rule: Cerbos's deny-overrides would not be first-match`);
    seenApprove ||= r.verdict === "approve";
  }
  if (ir.otherwise?.verdict === "approve") throw new Error("`otherwise approve` has no equivalent in Cerbos's default deny");
}

/**
 * Compiles the writ policy (for its IR and signals schema) and returns the Cerbos policy directory's files, by
 * path relative to it. Cerbos reads JSON policies as well as YAML, so no YAML writer is needed.
 */
export async function cerbosPolicyFiles(): Promise<ReadonlyMap<string, string>> {
  const result = compile(POLICY_SOURCE, await readFile(POLICY_SOURCE, "utf8"));
  if (!result.valid || !result.ir || !result.bundle) {
    throw new Error(
      `${POLICY_SOURCE} does not compile: ${result.errors
        .slice(0, 3)
        .map((e) => `${e.code} ${e.message}`)
        .join("; ")}`,
    );
  }
  checkShape(result.ir);
  const schema = result.bundle.files.get(BUNDLE_FILES.schema);
  if (!schema) throw new Error(`the compiled bundle has no ${BUNDLE_FILES.schema}`);
  const policy = {
    apiVersion: "api.cerbos.dev/v1",
    resourcePolicy: {
      resource: CERBOS_KIND,
      version: "default",
      schemas: { resourceSchema: { ref: `cerbos:///${SCHEMA_FILE}` } },
      rules: Object.entries(RULES).map(([name, { effect, expr }]) => ({
        name,
        actions: [CERBOS_ACTION],
        roles: ["*"],
        effect,
        condition: { match: { expr } },
      })),
    },
  };
  return new Map([
    [`${CERBOS_KIND}.json`, JSON.stringify(policy, null, 2)],
    [`_schemas/${SCHEMA_FILE}`, new TextDecoder().decode(schema)],
  ]);
}
