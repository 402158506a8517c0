/**
 * The workflow of spec 1.9 in-process, for applications that run no sidecar: the runtime's `Authorizer`,
 * `resolveOverride`, `confirmExecution` and `verifyAttestation` behind the same methods, shapes and errors as the
 * Surface A client (`AuthorizationWorkflow`). Replay protection is the injected store's: with the memory store a
 * replay is refused until the process ends, with `openLmdbReplayStore` across restarts.
 *
 * What the sidecar adds and this does not: HTTP, authentication, rate limits, the audit trail and the legacy
 * `/execute`.
 */
import {
  Authorizer,
  DEFAULT_TIME_WINDOW_SECONDS,
  PolicyRegistry,
  confirmExecution,
  confirmationAnswer,
  executedActionOf,
  isTimestamp,
  resolveOverride,
  toEndpointVerification,
  verifyAttestation,
  type ReplayStore,
  type Signer,
  type TrustRootDocument,
  type VerifierOptions,
} from "@writ/runtime";
import type {
  Attestation,
  ConfirmExecutionRequest,
  ConfirmExecutionResponse,
  DryRunRequest,
  DryRunResponse,
  EvaluateRequest,
  EvaluateResponse,
  OverrideRequest,
  OverrideResponse,
  PolicySchema,
  SimulateResponse,
  VerifyResponse,
} from "@writ/wire";
import { pinnedTrustRoot, signerOf } from "../keys.js";
import type { PolicyIdOf, TypedDryRunRequest, TypedEvaluateRequest, UntypedPolicies } from "../typed-signals.js";
import type { AuthorizationWorkflow } from "../workflow.js";
import { invalidRequest, refusing } from "./refusals.js";

export interface EmbeddedAuthorizerOptions {
  /** Compiled bundles (`writ compile`), read from `{policiesRoot}/{policyId}/{version}/` on first use. */
  readonly policiesRoot: string;
  /** Ed25519 PKCS8 PEM: signs attestations, override records and integrity proofs. */
  readonly signingKeyPem: string;
  /** `new MemoryReplayStore()` (development) or `await openLmdbReplayStore(dir)`; `close()` closes it. */
  readonly store: ReplayStore;
  /** The keys whose attestations `verify` and `confirmExecution` accept; default the signing key alone. */
  readonly trustRoot?: TrustRootDocument;
  /** SPKI PEM keys a bundle's `bundle.sig` must verify against; when given, unsigned bundles are refused. */
  readonly bundleKeys?: readonly string[];
  /**
   * The clock, read once a decision: the instant a policy's `now` reads and the attestation's `issuedAt`; default the
   * system's. An application's tests set it to decide a policy that reads `now` at the instant they choose.
   */
  readonly now?: () => Date;
}

/** The longest `timeWindowSeconds` the sidecar accepts: a year, far beyond any execution an attestation covers. */
const MAX_TIME_WINDOW_SECONDS = 31_536_000;

/** What is wrong with a `timeWindowSeconds`, worded as the sidecar's request validation words it; null when fine. */
function timeWindowProblem(window: unknown): string | null {
  if (typeof window !== "number" || !Number.isFinite(window)) return "must be number";
  if (window <= 0) return "must be > 0";
  return window > MAX_TIME_WINDOW_SECONDS ? `must be <= ${MAX_TIME_WINDOW_SECONDS}` : null;
}

/** `new EmbeddedAuthorizer<WritPolicies>(options)` types the signals as the GovernanceClient does (docs/sdk.md "Typed signals"). */
export class EmbeddedAuthorizer<Policies extends object = UntypedPolicies> implements AuthorizationWorkflow<Policies> {
  readonly #authorizer: Authorizer;
  readonly #signer: Signer;
  readonly #verifier: VerifierOptions;
  readonly #store: ReplayStore;

  /** @throws WritKeyError when a key is unusable, or the trust root does not hold the signing key */
  constructor(options: EmbeddedAuthorizerOptions) {
    this.#signer = signerOf(options.signingKeyPem, options.trustRoot);
    this.#verifier = { trustRoot: this.#signer.trustRoot };
    this.#store = options.store;
    const trustedKeys = options.bundleKeys?.length ? pinnedTrustRoot(options.bundleKeys).keys : [];
    const registry = new PolicyRegistry(options.policiesRoot, { trustedKeys, requireSignature: trustedKeys.length > 0 });
    this.#authorizer = new Authorizer({
      registry,
      signer: this.#signer,
      store: this.#store,
      ...(options.now === undefined ? {} : { now: options.now }),
    });
  }

  policySchema(policyId: string, policyVersion: string): Promise<PolicySchema> {
    return refusing(async () => {
      const bundle = await this.#authorizer.policy(policyId, policyVersion, "schema");
      return {
        policyId,
        policyVersion,
        schemaVersion: bundle.manifest.schemaVersion,
        bundleHash: bundle.manifest.bundle_hash,
        governs: { actionType: bundle.ir.governs.action, binding: [...bundle.ir.governs.binding] },
        // A JSON Schema document, which the bundle loader has read as a JSON object.
        signalsSchema: bundle.schema as Readonly<Record<string, unknown>>,
      };
    });
  }

  evaluate<Id extends PolicyIdOf<Policies>, Version extends string>(
    request: TypedEvaluateRequest<Policies, Id, Version>,
  ): Promise<EvaluateResponse>;
  evaluate(request: EvaluateRequest): Promise<EvaluateResponse> {
    const { verifiedSignals, ...rest } = request;
    return refusing(() => this.#authorizer.evaluate({ ...rest, signals: verifiedSignals }));
  }

  dryRun<Id extends PolicyIdOf<Policies>, Version extends string>(
    request: TypedDryRunRequest<Policies, Id, Version>,
  ): Promise<DryRunResponse>;
  dryRun(request: DryRunRequest): Promise<DryRunResponse> {
    return refusing(() => this.#authorizer.dryRun(request.policyId, request.policyVersion, request.signals));
  }

  simulate<Id extends PolicyIdOf<Policies>, Version extends string>(
    request: TypedDryRunRequest<Policies, Id, Version>,
  ): Promise<SimulateResponse>;
  simulate(request: DryRunRequest): Promise<SimulateResponse> {
    return refusing(() => this.#authorizer.simulate(request.policyId, request.policyVersion, request.signals));
  }

  override(request: OverrideRequest): Promise<OverrideResponse> {
    return refusing(() => resolveOverride(request, { store: this.#store, signer: this.#signer }));
  }

  async confirmExecution(request: ConfirmExecutionRequest): Promise<ConfirmExecutionResponse> {
    const { actionTimestamp } = request.executedAction;
    // What the sidecar refuses as a malformed request; the runtime would only count it as outside the window.
    if (!isTimestamp(actionTimestamp))
      throw invalidRequest(
        "body/executedAction/actionTimestamp",
        "must be an ISO 8601 date-time with a time zone, e.g. 2026-11-22T10:00:00Z",
      );
    const window = request.timeWindowSeconds ?? DEFAULT_TIME_WINDOW_SECONDS;
    const windowProblem = timeWindowProblem(window);
    if (windowProblem !== null) throw invalidRequest("body/timeWindowSeconds", windowProblem);
    const executed = executedActionOf(request.executedAction);
    const proof = await refusing(() =>
      confirmExecution(request.attestation, executed, window, { verifier: this.#verifier, signer: this.#signer, store: this.#store }),
    );
    // As the sidecar answers it.
    return confirmationAnswer(proof);
  }

  async verify(attestation: Attestation): Promise<VerifyResponse> {
    return toEndpointVerification(verifyAttestation(attestation, this.#verifier));
  }

  /** Closes the replay store (flushing it, for LMDB). */
  close(): Promise<void> {
    return this.#store.close();
  }
}
