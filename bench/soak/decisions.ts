/**
 * Decisions as the sidecar writes them, made fast enough to seed millions.
 *
 * Templates: the shipped payments.transfer@1.2.0 decides each valid signal set of its test file through the runtime's
 * own `Authorizer` (bundle loaded and signature-checked, signals validated, rules evaluated, attestation signed with
 * the store's signing key), and the `consume` call it makes is captured: the fingerprint's options, with the decision's
 * record and, for an escalation, the pending context. A seeded decision is a template with its executionId,
 * execution_fingerprint and issuedAt/recordedAt replaced, and its signals hash and signature made fresh (random bytes of
 * their size), so every record has the sidecar's exact shape and size and shares nothing of its own with another
 * (records are stored coded against what their shape shares: sidecar/src/audit/record-coding.ts). Its signature does NOT
 * verify, and nothing in the soak verifies it (the log's leaf hashes are computed from the stored bytes, so the record
 * log itself is consistent).
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import {
  Authorizer,
  MemoryReplayStore,
  PolicyRegistry,
  createSigner,
  createTrustRoot,
  executionFingerprint,
  loadPublicKeyPem,
  pendingContext,
  type Attestation,
  type ConsumeOptions,
  type DecisionAuditRecord,
  type PendingContext,
  type ReplayResult,
  type SigningKey,
} from "@writ/runtime";
import type { Signals } from "../sidecar/policy-cases.js";

export const POLICY_ID = "payments.transfer";
export const POLICY_VERSION = "1.2.0";

interface Template {
  readonly record: DecisionAuditRecord;
  readonly context: PendingContext | undefined;
}

/** What a `consume` of the sidecar's `Authorizer` is called with. */
export interface DecisionWrite {
  readonly fingerprint: string;
  readonly options: ConsumeOptions;
}

/** Captures the options of every `consume`, and consumes as a memory store would. */
class CapturingStore extends MemoryReplayStore {
  readonly captured: ConsumeOptions[] = [];

  override consume(fingerprint: string, options: ConsumeOptions = {}): Promise<ReplayResult> {
    this.captured.push(options);
    return super.consume(fingerprint, options);
  }
}

export class DecisionMaker {
  readonly #templates: readonly Template[];

  private constructor(templates: readonly Template[]) {
    this.#templates = templates;
  }

  /**
   * One template per signal set, decided by the bundle under `policiesRoot` (signed by the key in `bundleKeyFile`) and
   * signed with `key`, the signing key of the store the decisions go to (as the sidecar serving it would).
   */
  static async create(
    policiesRoot: string,
    bundleKeyFile: string,
    key: SigningKey,
    signalSets: readonly Signals[],
  ): Promise<DecisionMaker> {
    const registry = new PolicyRegistry(policiesRoot, {
      trustedKeys: [loadPublicKeyPem(await readFile(bundleKeyFile, "utf8"))],
      requireSignature: true,
    });
    const store = new CapturingStore();
    const authorizer = new Authorizer({ registry, signer: createSigner(key, createTrustRoot("writ-local-1", [key.publicKey])), store });
    const templates: Template[] = [];
    for (const [i, signals] of signalSets.entries()) {
      await authorizer.evaluate({ executionId: `template-${i}`, policyId: POLICY_ID, policyVersion: POLICY_VERSION, signals });
      const options = store.captured[i]!;
      if (options.record?.kind !== "decision") throw new Error(`the Authorizer consumed template ${i} without a decision record`);
      templates.push({ record: options.record.body, context: options.context as PendingContext | undefined });
    }
    return new DecisionMaker(templates);
  }

  /** The decision of `executionId` at `at` (Unix ms), from template `i` modulo their number. */
  make(i: number, executionId: string, at: number): DecisionWrite {
    const template = this.#templates[i % this.#templates.length]!;
    const fingerprint = executionFingerprint(executionId);
    const issuedAt = new Date(at).toISOString();
    const fresh = randomBytes(96);
    const attestation = {
      ...template.record.attestation,
      executionId,
      execution_fingerprint: fingerprint,
      issuedAt,
      signalsHash: fresh.toString("hex", 0, 32),
      signature: fresh.toString("base64", 32),
    } as Attestation;
    const record: DecisionAuditRecord = { ...template.record, executionId, attestation, recordedAt: issuedAt };
    const context = template.context === undefined ? undefined : pendingContext(attestation);
    return { fingerprint, options: { now: at, ...(context === undefined ? {} : { context }), record: { kind: "decision", body: record } } };
  }
}
