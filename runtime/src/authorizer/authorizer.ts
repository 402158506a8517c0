import {
  VERDICT_STATUS,
  createAttestation,
  attestationBody,
  createLegacyAttestation,
  executionFingerprint,
  type Attestation,
  type AttestationV1,
  type AttestationV2,
  type DecisionRecord,
} from "../attest/attestation.js";
import { createRuntimeIdentity, type RuntimeIdentity } from "../attest/identity.js";
import { pendingContext } from "../attest/override.js";
import type { Signer } from "../attest/trust-root.js";
import type { LoadedBundle } from "../bundle/load.js";
import { AuthorizationError, BundleError } from "../errors.js";
import type { Decision } from "../ir/evaluate.js";
import type { Verdict } from "../ir/types.js";
import type { ReplayStore } from "../replay/store.js";
import type { PolicyRegistry } from "./registry.js";

export interface EvaluateRequest {
  readonly executionId: string;
  readonly policyId: string;
  readonly policyVersion: string;
  /** Already verified by the caller; validated here against the policy's signals schema. */
  readonly signals: Readonly<Record<string, unknown>>;
}

export interface Evaluated<A> {
  readonly status: "approved" | "pending_override" | "rejected";
  readonly requires_override: boolean;
  readonly attestation: A;
}

/** Spec 2.6: the dry run's answer. */
export interface DryRun {
  readonly wouldDecide: "approved" | "pending_override" | "rejected";
  readonly ruleMatched: string;
  readonly reason: string;
  readonly signalsValidated: true;
}

/** Spec 2.7: what evaluate would do, with no signing, replay write or audit record. */
export interface Simulation {
  readonly simulation: true;
  readonly decision: { readonly action: Verdict; readonly reason: string; readonly ruleMatched: string };
  readonly signalsValidated: true;
  readonly policyLoaded: true;
  readonly wouldSign: boolean;
  /** The variant 1 attestation that would be signed, without its signature (and with a placeholder executionId). */
  readonly attestationPreview: Omit<AttestationV1, "signature">;
}

export const SIMULATION_EXECUTION_ID = "simulation";

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
 * The library semantics of evaluate (spec 4.1 processing order: load policy, load schema, validate signals,
 * evaluate rules, produce decision, create signed attestation, return it), with replay protection around
 * the side effect: the fingerprint is reserved only once there is a decision to sign, and confirmed (or,
 * for an escalation, marked pending) before the attestation is returned.
 */
export class Authorizer {
  readonly runtime: RuntimeIdentity | null;
  readonly #now: () => Date;

  constructor(readonly options: AuthorizerOptions) {
    this.runtime = options.signer ? createRuntimeIdentity(options.signer) : null;
    this.#now = options.now ?? (() => new Date());
  }

  /** `POST /evaluate` variant 1. @throws AuthorizationError */
  evaluate(request: EvaluateRequest): Promise<Evaluated<AttestationV1>> {
    return this.#execute(request, "verifiedSignals", createAttestation);
  }

  /** Legacy `POST /execute`: the variant 2 attestation. @throws AuthorizationError */
  execute(request: EvaluateRequest): Promise<Evaluated<AttestationV2>> {
    return this.#execute(request, "signals", createLegacyAttestation);
  }

  /** `POST /evaluate` variant 2: the decision without attestation, replay write or any other side effect. */
  async dryRun(policyId: string, policyVersion: string, signals: Readonly<Record<string, unknown>>): Promise<DryRun> {
    const { decided } = await this.#decide(policyId, policyVersion, signals, "signals");
    return { wouldDecide: VERDICT_STATUS[decided.verdict].status, ruleMatched: decided.ruleId, reason: decided.reason, signalsValidated: true };
  }

  /** `POST /simulate`. */
  async simulate(policyId: string, policyVersion: string, signals: Readonly<Record<string, unknown>>): Promise<Simulation> {
    const { bundle, decided } = await this.#decide(policyId, policyVersion, signals, "signals");
    const record = this.#record(SIMULATION_EXECUTION_ID, bundle, signals, decided);
    return {
      simulation: true,
      decision: { action: decided.verdict, reason: decided.reason, ruleMatched: decided.ruleId },
      signalsValidated: true,
      policyLoaded: true,
      wouldSign: this.options.signer !== null && this.options.store !== null,
      attestationPreview: attestationBody(record, this.options.signer?.trustRoot.version ?? "", this.options.signer?.key.keyId ?? "", this.runtime?.manifestHash ?? ""),
    };
  }

  #record(executionId: string, bundle: LoadedBundle, signals: Readonly<Record<string, unknown>>, decided: { verdict: Verdict; reason: string }): DecisionRecord {
    return {
      executionId,
      bundle: bundle.manifest,
      binding: bundle.ir.governs.binding,
      signals,
      verdict: decided.verdict,
      reason: decided.reason,
      issuedAt: this.#now().toISOString(),
    };
  }

  async #execute<A extends Attestation>(
    request: EvaluateRequest,
    field: SignalsField,
    sign: (d: DecisionRecord, signer: Signer, runtime: RuntimeIdentity) => A,
  ): Promise<Evaluated<A>> {
    const { bundle, decided } = await this.#decide(request.policyId, request.policyVersion, request.signals, field);
    const { store, signer } = this.options;
    if (!store) throw new AuthorizationError("INV-REPLAY-001", "no replay store is configured: execution fails closed");
    if (!signer || !this.runtime) throw new AuthorizationError("RUNTIME_NOT_CONFIGURED", "no signing key is configured");

    const fingerprint = executionFingerprint(request.executionId);
    const reserved = await store.reserve(fingerprint);
    if (!reserved.ok) throw new AuthorizationError("INV-013", `execution \`${request.executionId}\` was already consumed`);
    const token = reserved.entry.token;
    try {
      const attestation = sign(this.#record(request.executionId, bundle, request.signals, decided), signer, this.runtime);
      // INVARIANT (acknowledged means durable): the attestation leaves only after its transition is stored.
      const stored =
        decided.verdict === "escalate"
          ? await store.markPendingOverride(fingerprint, token, pendingContext(attestation))
          : await store.confirm(fingerprint, token);
      if (!stored.ok) throw new AuthorizationError("INV-013", `execution \`${request.executionId}\` was already consumed`);
      const state = VERDICT_STATUS[decided.verdict];
      return { status: state.status, requires_override: state.requiresOverride, attestation };
    } catch (e) {
      await store.fail(fingerprint, token);
      if (e instanceof AuthorizationError) throw e;
      throw new AuthorizationError("EVALUATION_FAILED", `evaluation failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Load policy and schema, validate every signal, evaluate: no side effects. */
  async #decide(
    policyId: string,
    policyVersion: string,
    signals: Readonly<Record<string, unknown>>,
    field: SignalsField,
  ): Promise<{ bundle: LoadedBundle; decided: Extract<Decision, { decided: true }> }> {
    const bundle = await this.policy(policyId, policyVersion, field);
    const validation = bundle.validateSignals(signals);
    if (!validation.valid) {
      const code = field === "verifiedSignals" ? "SIGNAL_VALIDATION_FAILED" : "SIGNALS_VALIDATION_FAILED";
      throw new AuthorizationError(code, "signals do not match the policy's signals schema", validation.errors);
    }
    const decision = bundle.policy.evaluate(signals);
    if (!decision.decided) throw new AuthorizationError("SYS-006", `no rule of ${policyId}@${policyVersion} decided and it has no catch-all`);
    return { bundle, decided: decision };
  }

  /**
   * The policy's bundle. A missing one is 404 POLICY_NOT_FOUND where the request names `verifiedSignals`
   * (variant 1), and 422 POLICY_BUNDLE_MISSING on the endpoints that take `signals` (their spec status lists
   * have no 404). A bundle that fails its checks is EVALUATION_FAILED: the server's fault, not the caller's.
   * @throws AuthorizationError
   */
  async policy(policyId: string, policyVersion: string, field: SignalsField = "verifiedSignals"): Promise<LoadedBundle> {
    try {
      return await this.options.registry.get(policyId, policyVersion);
    } catch (e) {
      if (e instanceof BundleError && e.code === "BUNDLE_NOT_FOUND") {
        const code = field === "verifiedSignals" ? "POLICY_NOT_FOUND" : "POLICY_BUNDLE_MISSING";
        throw new AuthorizationError(code, `no bundle for ${policyId}@${policyVersion}`);
      }
      if (e instanceof BundleError) throw new AuthorizationError("EVALUATION_FAILED", `bundle ${policyId}@${policyVersion} refused: ${e.message}`);
      throw e;
    }
  }
}
