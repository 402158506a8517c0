/**
 * Single-operator mutations of the shipped policies, for `writ diff` (mutations.test.ts): each replaces one piece of
 * a condition, found exactly once in the source, with the operator changed (or, marked `same`, rewritten so that
 * every request is decided alike, which the diff must find equivalent).
 */
export interface Mutation {
  readonly from: string;
  readonly to: string;
  /** The rewrite decides every request alike. */
  readonly same?: true;
  /** Why some regions stay undecided (what `writ diff` does not model), for the few mutations that leave some. */
  readonly undecided?: string;
}

/**
 * Two different rounded sums of the same `number` signals (`daily_total + amount`, `daily_total - amount`): each is a
 * term of its own (formula.ts), and how one bounds the other (here: both above and at most 25000 needs `amount < 0`)
 * is not modelled, since IEEE-754 rounds them; the regions that need it are left undecided.
 */
const DOUBLE_SUMS = "two different rounded sums of the same `number` signals are not related to each other";

/** payments.transfer 1.1.0 and 1.2.0 (amounts on `number`): the sites both share. */
const PAYMENTS_NUMBER: readonly Mutation[] = [
  { from: "risk_score > HIGH_RISK", to: "risk_score >= HIGH_RISK" },
  { from: "risk_score > HIGH_RISK", to: "risk_score == HIGH_RISK" },
  { from: "when not kyc_verified", to: "when kyc_verified" },
  { from: "daily_total + amount > DAILY_LIMIT", to: "daily_total + amount >= DAILY_LIMIT" },
  { from: "daily_total + amount > DAILY_LIMIT", to: "daily_total - amount > DAILY_LIMIT", undecided: DOUBLE_SUMS },
  { from: "daily_total + amount > DAILY_LIMIT", to: "daily_total + amount < DAILY_LIMIT" },
  { from: "account_age_days < 30 and amount >= 1000", to: "account_age_days <= 30 and amount >= 1000" },
  { from: "account_age_days < 30 and amount >= 1000", to: "account_age_days < 30 or amount >= 1000" },
  { from: "account_age_days < 30 and amount >= 1000", to: "account_age_days < 30 and amount > 1000" },
  { from: "amount > REVIEW_AMOUNT", to: "amount >= REVIEW_AMOUNT" },
  { from: "amount > REVIEW_AMOUNT", to: "amount != REVIEW_AMOUNT" },
  { from: "not present(destination_country) and amount", to: "present(destination_country) and amount" },
  { from: "and amount >= UNRESOLVED_LIMIT", to: "and amount < UNRESOLVED_LIMIT" },
  { from: "HIGH_RISK and currency not in", to: "HIGH_RISK or currency not in" },
  { from: "currency not in AUTO_CURRENCIES", to: "currency in AUTO_CURRENCIES" },
  { from: "risk_score < ELEVATED_RISK and", to: "risk_score <= ELEVATED_RISK and" },
  { from: "risk_score < ELEVATED_RISK and", to: "risk_score < ELEVATED_RISK or" },
  { from: "ELEVATED_RISK and currency in AUTO_CURRENCIES", to: "ELEVATED_RISK and currency not in AUTO_CURRENCIES" },
  { from: "destination_country in SANCTIONED", to: "destination_country not in SANCTIONED" },
  { from: "amount >= 1000", to: "1000 <= amount", same: true },
];

/** payments.transfer 1.3.0 (amounts `decimal(2)`): the same sites, some varied, sums among them. */
const PAYMENTS_DECIMAL: readonly Mutation[] = [
  { from: "risk_score > HIGH_RISK", to: "risk_score >= HIGH_RISK" },
  { from: "when not kyc_verified", to: "when kyc_verified" },
  { from: "daily_total + amount > DAILY_LIMIT", to: "daily_total + amount >= DAILY_LIMIT" },
  { from: "daily_total + amount > DAILY_LIMIT", to: "daily_total - amount > DAILY_LIMIT" },
  { from: "daily_total + amount > DAILY_LIMIT", to: "daily_total + amount != DAILY_LIMIT" },
  { from: "daily_total + amount > DAILY_LIMIT", to: "amount + daily_total > DAILY_LIMIT", same: true },
  { from: "daily_total + amount > DAILY_LIMIT", to: "daily_total > DAILY_LIMIT - amount", same: true },
  // Sums of cents: above 25000.001 is above 25000.
  { from: "daily_total + amount > DAILY_LIMIT", to: "daily_total + amount > 25000.001", same: true },
  { from: "account_age_days < 30 and amount >= 1000", to: "account_age_days <= 30 and amount >= 1000" },
  { from: "account_age_days < 30 and amount >= 1000", to: "account_age_days < 30 or amount >= 1000" },
  { from: "account_age_days < 30 and amount >= 1000", to: "account_age_days < 30 and amount > 1000" },
  { from: "account_age_days < 30 and amount >= 1000", to: "account_age_days < 30 and amount > 999.99", same: true },
  { from: "amount > REVIEW_AMOUNT", to: "amount >= REVIEW_AMOUNT" },
  { from: "amount > REVIEW_AMOUNT", to: "amount * 100 > REVIEW_AMOUNT * 100", same: true },
  { from: "and amount >= UNRESOLVED_LIMIT", to: "and amount < UNRESOLVED_LIMIT" },
  { from: "HIGH_RISK and currency not in", to: "HIGH_RISK or currency not in" },
  { from: "risk_score < ELEVATED_RISK and", to: "risk_score <= ELEVATED_RISK and" },
  { from: "risk_score < ELEVATED_RISK and", to: "risk_score < ELEVATED_RISK or" },
  { from: "destination_country in SANCTIONED", to: "destination_country not in SANCTIONED" },
  { from: "SANCTIONED or destination_account", to: "SANCTIONED and destination_account" },
];

const DEPLOY: readonly Mutation[] = [
  { from: "requested_at > change_window_end", to: "requested_at >= change_window_end" },
  { from: "requested_at > change_window_end", to: "requested_at < change_window_end" },
  { from: "requested_at > change_window_end", to: "requested_at != change_window_end" },
  { from: "requested_at > change_window_end", to: "change_window_end < requested_at", same: true },
  { from: "requested_at >= FREEZE_START", to: "requested_at > FREEZE_START" },
  { from: "requested_at < FREEZE_END", to: "requested_at <= FREEZE_END" },
  { from: "FREEZE_START and requested_at", to: "FREEZE_START or requested_at" },
  { from: "and not emergency", to: "and emergency" },
  { from: 'tier != "internal" and not', to: 'tier == "internal" and not' },
  { from: "len(rollback_plan) < MIN_ROLLBACK_PLAN", to: "len(rollback_plan) <= MIN_ROLLBACK_PLAN" },
  { from: 'or rollback_plan contains "TODO"', to: 'and rollback_plan contains "TODO"' },
  { from: "coverage < MIN_COVERAGE", to: "coverage <= MIN_COVERAGE" },
  { from: '"critical" and coverage', to: '"critical" or coverage' },
  { from: "coverage - previous_coverage < -MAX_COVERAGE_DROP", to: "coverage - previous_coverage <= -MAX_COVERAGE_DROP" },
  { from: "coverage - previous_coverage < -MAX_COVERAGE_DROP", to: "previous_coverage - coverage < -MAX_COVERAGE_DROP" },
  { from: 'when tier == "internal" approve', to: 'when tier != "internal" approve' },
  { from: "when oncall_approved", to: "when not oncall_approved" },
  { from: 'branch != "main" and', to: 'branch == "main" and' },
  { from: '"release/" or branch', to: '"release/" and branch' },
  { from: "when not tests_passed", to: "when tests_passed" },
];

const EXPORT: readonly Mutation[] = [
  { from: "not requester_email ends_with", to: "requester_email ends_with" },
  { from: "SENSITIVE and not encrypted", to: "SENSITIVE or not encrypted" },
  { from: "and not encrypted", to: "and encrypted" },
  { from: "len(purpose) < MIN_PURPOSE_LENGTH", to: "len(purpose) <= MIN_PURPOSE_LENGTH" },
  { from: 'and classification != "public"', to: 'and classification == "public"' },
  { from: 'requester_role == "contractor"', to: 'requester_role != "contractor"' },
  { from: "destination_region != data_region", to: "destination_region == data_region" },
  { from: "destination_region != data_region", to: "data_region != destination_region", same: true },
  { from: "and not present(approval_ticket)", to: "and present(approval_ticket)" },
  { from: '"restricted" and requester_role', to: '"restricted" or requester_role' },
  { from: "record_count > BULK_RECORDS", to: "record_count >= BULK_RECORDS" },
  { from: "record_count > BULK_RECORDS", to: "record_count < BULK_RECORDS" },
  { from: "record_count > BULK_RECORDS", to: "record_count != BULK_RECORDS" },
  { from: "present(approval_ticket) and requester_role", to: "present(approval_ticket) or requester_role" },
  { from: "requester_role in TRUSTED_ROLES", to: "requester_role not in TRUSTED_ROLES" },
  { from: "SMALL_EXPORT and classification", to: "SMALL_EXPORT or classification" },
  { from: 'classification in ["public", "internal"]', to: 'classification not in ["public", "internal"]' },
  { from: 'data_region == "eu" and', to: 'data_region != "eu" and' },
  { from: "classification in SENSITIVE and not", to: "classification not in SENSITIVE and not" },
  { from: '"contractor" and classification', to: '"contractor" or classification' },
];

export interface MutationTable {
  readonly mutations: readonly Mutation[];
  /** Valid values for the policy's string signals, beside the constants its conditions name, for the brute force. */
  readonly strings: Readonly<Record<string, readonly string[]>>;
}

const PAYMENTS_STRINGS = { destination_account: ["DE89370400440532013000", "IR12ABCDEFGHIJK0000"], destination_country: ["DE", "IR"] };

export const MUTATION_TABLES: Readonly<Record<string, MutationTable>> = {
  "payments.transfer/1.1.0": { mutations: PAYMENTS_NUMBER, strings: PAYMENTS_STRINGS },
  "payments.transfer/1.2.0": { mutations: PAYMENTS_NUMBER, strings: PAYMENTS_STRINGS },
  "payments.transfer/1.3.0": { mutations: PAYMENTS_DECIMAL, strings: PAYMENTS_STRINGS },
  "deploy.production/1.0.0": {
    mutations: DEPLOY,
    strings: {
      service: ["checkout"],
      change_ticket: ["CHG-123456"],
      commit_sha: ["0123456789abcdef0123456789abcdef01234567"],
      branch: ["main", "release/1.2", "feature/x"],
      rollback_plan: ["short", "roll back with the previous image tag", "TODO: write the rollback"],
    },
  },
  "customer-data.export/1.0.0": {
    mutations: EXPORT,
    strings: {
      purpose: ["audit", "quarterly churn analysis for the board"],
      requester_email: ["ana@writ.example", "ana@elsewhere.example"],
      destination: ["s3://team-dev/exports/", "s3://analytics-exports/2025/"],
      approval_ticket: ["PRIV-1234"],
    },
  },
};
