import {
  VERDICT_STATUS,
  createAttestationAsync,
  attestationBody,
  createLegacyAttestation,
  type Attestation,
  type AttestationV1,
  type AttestationV2,
  type DecisionRecord,
  type SelfVerifyingAttestation,
} from "../attest/attestation.js";
import { createRuntimeIdentity, type RuntimeIdentity } from "../attest/identity.js";
import { pendingContext } from "../attest/override.js";
import type { Signer } from "../attest/trust-root.js";
import type { LoadedBundle } from "../bundle/load.js";
import { AuthorizationError, BundleError, SignerUnavailableError } from "../errors.js";
import type { ErrorCode } from "../errors/codes.js";
import type { Decision } from "../ir/evaluate.js";
import { decisionInstant } from "../ir/time.js";
import { explain, type Explanation } from "../ir/explain.js";
import type { Verdict } from "../ir/types.js";
import type { DryRunResponse, SimulateResponse } from "@writ/wire/types";
import { decisionRecordJson, type DecisionAuditRecord } from "../replay/records.js";
import type { ReplayStore } from "../replay/store.js";
import { endPhase, phaseStart, timedPhase, type DecisionReport } from "../report.js";
import type { PolicyRegistry } from "./registry.js";

export interface EvaluateRequest {
  readonly executionId: string;
  readonly policyId: string;
  readonly policyVersion: string;
  /** Already verified by the caller; validated here against the policy's signals schema. */
  readonly signals: Readonly<Record<string, unknown>>;
  /** Where each signal came from (docs/signing.md): handed to `onDecision` for audit; never hashed or evaluated. */
  readonly signalProvenance?: Readonly<Record<string, unknown>>;
}

export interface Evaluated<A> {
  readonly status: "approved" | "pending_override" | "rejected";
  readonly requires_override: boolean;
  readonly attestation: A;
}

/** A signed decision's answer and its JSON text, made once from the attestation's (`SelfVerifyingAttestation.text`). */
export interface SerializedEvaluation<A> {
  readonly evaluated: Evaluated<A>;
  /** `JSON.stringify(evaluated)` up to the attestation's member order (JCS for variant 1). */
  readonly json: string;
}

/** Spec 2.6: the dry run's answer (DryRun); spec 2.7: what evaluate would do, with no signing, replay write or audit
 * record (Simulation). Each has `now` only for a policy that reads it, `explanation` only when asked for (`DryRunOptions`). */
export type { DryRunResponse as DryRun, SimulateResponse as Simulation };

/** What a dry run or simulation answers beyond the spec's members. */
export interface DryRunOptions {
  /** Add `explanation`: every rule's condition evaluated down to the signals (ir/explain.ts). */
  readonly explain?: boolean;
  /** Filled with the phases' timings and what decided (report.ts), for the caller's logs, metrics and traces. */
  readonly report?: DecisionReport;
}

export const SIMULATION_EXECUTION_ID = "simulation";

/**
 * `{now}` for a policy that reads it, so a dry run or simulation says the instant it decided at; `{explanation}` when
 * asked for. Otherwise nothing: the spec's answer is unchanged by default.
 */
function additionsOf(
  bundle: LoadedBundle,
  signals: Readonly<Record<string, unknown>>,
  at: Date,
  options: DryRunOptions,
): { now?: string; explanation?: Explanation } {
  return {
    ...(bundle.policy.readsNow ? { now: decisionInstant(at) } : {}),
    ...(options.explain === true ? { explanation: explain(bundle.ir, signals, at).explanation } : {}),
  };
}

const VERIFIED: Promise<void> = Promise.resolve();

function evaluationFailed(cause: unknown): AuthorizationError {
  return new AuthorizationError("EVALUATION_FAILED", `evaluation failed: ${cause instanceof Error ? cause.message : String(cause)}`);
}

export interface AuthorizerOptions {
  readonly registry: PolicyRegistry;
  /** Without one, nothing can be signed: RUNTIME_NOT_CONFIGURED. */
  readonly signer: Signer | null;
  /** Without one, execution fails closed: INV-REPLAY-001 (spec 2.12). */
  readonly store: ReplayStore | null;
  readonly now?: () => Date;
}

/** Which body wording a signal failure takes: `verifiedSignals` (variant 1) or `signals` (the others). */
type SignalsField = "verifiedSignals" | "signals";

/**
 * The codes a policy bundle that is missing or does not load is refused with, per use (spec 4.1 status lists):
 * - `verifiedSignals` (`/evaluate` variant 1, which lists 404 and 500): 404 `Policy not found`; a broken bundle is
 *   the spec's 500 `Evaluation failed`, an unexpected runtime error during evaluate, retried with backoff;
 * - `signals` (`/execute`, the dry run, `/simulate`, whose lists have neither 404 nor 500): 422 `Policy not found`
 *   and 422 POLICY_BUNDLE_INVALID;
 * - `schema` (`GET /policies/{policyId}/versions/{version}/schema`, no list in the spec): 404 `Policy not found`,
 *   and 422 POLICY_BUNDLE_INVALID as on the routes that take signals.
 */
export const BUNDLE_REFUSALS = {
  verifiedSignals: { missing: "POLICY_NOT_FOUND", broken: "EVALUATION_FAILED" },
  signals: { missing: "POLICY_BUNDLE_MISSING", broken: "POLICY_BUNDLE_INVALID" },
  schema: { missing: "POLICY_NOT_FOUND", broken: "POLICY_BUNDLE_INVALID" },
} as const satisfies Record<string, { readonly missing: ErrorCode; readonly broken: ErrorCode }>;

export type BundleUse = keyof typeof BUNDLE_REFUSALS;

/**
 * The library semantics of evaluate (spec 4.1 processing order: load policy, load schema, validate signals,
 * evaluate rules, produce decision, create signed attestation, return it), with replay protection around
 * the side effect: once the attestation is signed, its fingerprint is consumed (or, for an escalation, marked
 * pending) in one atomic write, flushed before the attestation is returned; a fingerprint already consumed
 * answers INV-013 and the attestation is discarded.
 */
export class Authorizer {
  readonly runtime: RuntimeIdentity | null;
  readonly #now: () => Date;

  constructor(readonly options: AuthorizerOptions) {
    this.runtime = options.signer ? createRuntimeIdentity(options.signer) : null;
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * `POST /evaluate` variant 1. `report`: where the phases and the deciding rule are written (report.ts).
   * @throws AuthorizationError
   */
  async evaluate(request: EvaluateRequest, report?: DecisionReport): Promise<Evaluated<AttestationV1>> {
    return (await this.evaluateSerialized(request, report)).evaluated;
  }

  /** {@link evaluate}, with the answer's JSON text too: what a server sends, serialized once. @throws AuthorizationError */
  evaluateSerialized(request: EvaluateRequest, report?: DecisionReport): Promise<SerializedEvaluation<AttestationV1>> {
    return this.#execute(request, "evaluate", createAttestationAsync, report);
  }

  /** Legacy `POST /execute`: the variant 2 attestation. @throws AuthorizationError */
  async execute(request: EvaluateRequest, report?: DecisionReport): Promise<Evaluated<AttestationV2>> {
    // The variant 2 path signs and self-verifies synchronously (legacy, rate-limited to 100 a minute).
    const sign = async (d: DecisionRecord, signer: Signer, runtime: RuntimeIdentity) => {
      const attestation = createLegacyAttestation(d, signer, runtime);
      return { attestation, text: JSON.stringify(attestation), verified: VERIFIED };
    };
    return (await this.#execute(request, "execute", sign, report)).evaluated;
  }

  /** `POST /evaluate` variant 2: the decision without attestation, replay write or any other side effect. */
  async dryRun(
    policyId: string,
    policyVersion: string,
    signals: Readonly<Record<string, unknown>>,
    options: DryRunOptions = {},
  ): Promise<DryRunResponse> {
    const { bundle, decided, at } = await this.#decide(policyId, policyVersion, signals, "signals", options.report);
    return {
      wouldDecide: VERDICT_STATUS[decided.verdict].status,
      ruleMatched: decided.ruleId,
      reason: decided.reason,
      signalsValidated: true,
      ...additionsOf(bundle, signals, at, options),
    };
  }

  /** `POST /simulate`. */
  async simulate(
    policyId: string,
    policyVersion: string,
    signals: Readonly<Record<string, unknown>>,
    options: DryRunOptions = {},
  ): Promise<SimulateResponse> {
    const { bundle, decided, at } = await this.#decide(policyId, policyVersion, signals, "signals", options.report);
    const record = this.#record(SIMULATION_EXECUTION_ID, bundle, signals, decided, at);
    return {
      simulation: true,
      decision: { action: decided.verdict, reason: decided.reason, ruleMatched: decided.ruleId },
      signalsValidated: true,
      policyLoaded: true,
      wouldSign: this.options.signer !== null && this.options.store !== null,
      attestationPreview: attestationBody(
        record,
        this.options.signer?.trustRoot.version ?? "",
        this.options.signer?.key.keyId ?? "",
        this.runtime?.manifestHash ?? "",
      ),
      ...additionsOf(bundle, signals, at, options),
    };
  }

  /** `at`: the instant the decision was made at, which its `now` read (`#decide`). */
  #record(
    executionId: string,
    bundle: LoadedBundle,
    signals: Readonly<Record<string, unknown>>,
    decided: { verdict: Verdict; reason: string },
    at: Date,
  ): DecisionRecord {
    return {
      executionId,
      bundle: bundle.manifest,
      binding: bundle.ir.governs.binding,
      signals,
      verdict: decided.verdict,
      reason: decided.reason,
      // INVARIANT (one instant a decision): `issuedAt` is the text `now` read (time.ts `decisionInstant`).
      issuedAt: decisionInstant(at),
    };
  }

  async #execute<A extends Attestation>(
    request: EvaluateRequest,
    variant: DecisionAuditRecord["endpoint"],
    sign: (d: DecisionRecord, signer: Signer, runtime: RuntimeIdentity) => Promise<SelfVerifyingAttestation<A>>,
    report: DecisionReport | undefined,
  ): Promise<SerializedEvaluation<A>> {
    const field: SignalsField = variant === "evaluate" ? "verifiedSignals" : "signals";
    const { bundle, decided, at } = await this.#decide(request.policyId, request.policyVersion, request.signals, field, report);
    const { store, signer } = this.options;
    if (!store) throw new AuthorizationError("INV-REPLAY-001", "no replay store is configured: execution fails closed");
    if (!signer || !this.runtime) throw new AuthorizationError("RUNTIME_NOT_CONFIGURED", "no signing key is configured");
    if (report)
      report.decided = {
        policyId: bundle.manifest.policyId,
        policyVersion: bundle.manifest.version,
        verdict: decided.verdict,
        ruleId: decided.ruleId,
      };

    // Signed first, stored after: the outcome is known, so reserving and confirming is one atomic write (one flush).
    // An attestation whose executionId turns out to be consumed already is discarded: it never leaves.
    let signed: SelfVerifyingAttestation<A>;
    const signing = phaseStart(report);
    try {
      signed = await sign(this.#record(request.executionId, bundle, request.signals, decided, at), signer, this.runtime);
    } catch (e) {
      endPhase(report, "sign", signing);
      // Nothing was signed nor consumed: the client may retry (503), unlike a key that does not sign (500).
      throw e instanceof SignerUnavailableError ? e : evaluationFailed(e);
    }
    const writing = endPhase(report, "sign", signing);
    const attestation = signed.attestation;
    const state = VERDICT_STATUS[decided.verdict];
    const record: DecisionAuditRecord = {
      executionId: request.executionId,
      endpoint: variant,
      status: state.status,
      ruleMatched: decided.ruleId,
      attestation,
      ...(request.signalProvenance === undefined ? {} : { signalProvenance: request.signalProvenance }),
      recordedAt: attestation.issuedAt,
    };
    // INVARIANT (acknowledged means durable): the attestation leaves only after its replay entry (and the decision's
    // record, committed with it: INVARIANT (a transition is kept with its record)) is durable; `consume` resolves
    // after that. The attestation carries the fingerprint of its executionId (attestationBody computed it): not hashed twice.
    // INVARIANT (a decision's replay entry is created at its issuedAt): consumed at the attestation's own instant, so
    // the entry's `createdAt` says when the decision was made; the sidecar's LMDB audit finds a decision's record by it.
    const consuming = store.consume(attestation.execution_fingerprint, {
      now: Date.parse(attestation.issuedAt),
      // The variant 1 text is the attestation's JCS form (attestation-text.ts); the legacy one is serialized afresh.
      ...(decided.verdict === "escalate" ? { context: pendingContext(attestation, variant === "evaluate" ? signed.text : undefined) } : {}),
      record: { kind: "decision", body: record, json: decisionRecordJson(record, signed.text) },
    });
    // INVARIANT (no unverified signature leaves): self-verification (spec 2.2) runs while the replay write commits
    // and fsyncs, and the attestation is returned only once both have finished. Should it fail (the key's halves
    // disagree), the executionId stays consumed with the failure answered: fail closed, never an unverified answer.
    // The answer is made while the write is under way: after it, only the outcome is looked at.
    const answer: SerializedEvaluation<A> = {
      evaluated: { status: state.status, requires_override: state.requiresOverride, attestation },
      json: `{"status":"${state.status}","requires_override":${state.requiresOverride},"attestation":${signed.text}}`,
    };
    const [consumed, verified] = await Promise.allSettled([
      timedPhase(report, "write", writing, consuming),
      timedPhase(report, "verify", writing, signed.verified),
    ]);
    if (verified.status === "rejected") throw evaluationFailed(verified.reason);
    if (consumed.status === "rejected") throw consumed.reason;
    if (!consumed.value.ok) throw new AuthorizationError("INV-013", `execution \`${request.executionId}\` was already consumed`);
    return answer;
  }

  /**
   * Load policy and schema, validate every signal, read the clock, evaluate: no side effects. `at`, the clock read once,
   * is the decision's instant: what `now` reads and what the attestation's `issuedAt` says.
   */
  async #decide(
    policyId: string,
    policyVersion: string,
    signals: Readonly<Record<string, unknown>>,
    field: SignalsField,
    report: DecisionReport | undefined,
  ): Promise<{ bundle: LoadedBundle; decided: Extract<Decision, { decided: true }>; at: Date }> {
    const loading = phaseStart(report);
    let bundle: LoadedBundle;
    try {
      bundle = await this.policy(policyId, policyVersion, field);
    } catch (e) {
      endPhase(report, "bundle", loading);
      throw e;
    }
    const validating = endPhase(report, "bundle", loading);
    const validation = bundle.validateSignals(signals);
    const evaluating = endPhase(report, "validate", validating);
    if (!validation.valid) {
      const code = field === "verifiedSignals" ? "SIGNAL_VALIDATION_FAILED" : "SIGNALS_VALIDATION_FAILED";
      throw new AuthorizationError(code, "signals do not match the policy's signals schema", validation.errors);
    }
    const at = this.#now();
    const decision = bundle.policy.evaluate(signals, at);
    endPhase(report, "evaluate", evaluating);
    if (!decision.decided) {
      const { fault } = decision;
      // INVARIANT (no fault approves): a fault ends here, before anything is signed or consumed.
      if (fault !== null) {
        const where = `${policyId}@${policyVersion} rule \`${fault.ruleId}\``;
        throw new AuthorizationError(fault.code, `${where}: ${fault.message}`, [], fault.ruleId);
      }
      throw new AuthorizationError("SYS-006", `no rule of ${policyId}@${policyVersion} decided and it has no catch-all`);
    }
    return { bundle, decided: decision, at };
  }

  /**
   * The policy's bundle, for `use` (see BUNDLE_REFUSALS): a bundle that is missing or does not load (fails a check,
   * cannot be read, is not a regular file, times out) is refused with the code that route's spec statuses allow.
   * The refusal's message says why (for the log); the body is the code's alone.
   * @throws AuthorizationError
   */
  async policy(policyId: string, policyVersion: string, use: BundleUse = "verifiedSignals"): Promise<LoadedBundle> {
    try {
      return await this.options.registry.get(policyId, policyVersion);
    } catch (e) {
      if (!(e instanceof BundleError)) throw e;
      const refusal = BUNDLE_REFUSALS[use];
      if (e.code === "BUNDLE_NOT_FOUND") throw new AuthorizationError(refusal.missing, `no bundle for ${policyId}@${policyVersion}`);
      throw new AuthorizationError(refusal.broken, `bundle ${policyId}@${policyVersion} does not load: ${e.message}`);
    }
  }
}
