import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROVENANCE_VERSION, executionFingerprint, type AttestationV1, type AttestationV2, type Verdict } from "@writ/runtime";
import { open, type RootDatabase } from "lmdb";
import type { DecisionAudit, DecisionStatus } from "../../src/audit/types.js";

/** A fresh LMDB environment in a temporary directory; `reopen` closes it and opens the same directory again. */
export interface TempEnv {
  readonly root: RootDatabase;
  /** The environment's directory. */
  readonly dir: string;
  /** Closes the environment (once, however often it is called). */
  close(): Promise<void>;
  reopen(): Promise<TempEnv>;
  dispose(): Promise<void>;
}

export async function tempEnv(): Promise<TempEnv> {
  const dir = await mkdtemp(join(tmpdir(), "writ-audit-"));
  return envAt(dir);
}

function envAt(dir: string): TempEnv {
  // Room for every named database of the trail and its record log, as the sidecar opens it (storage/lmdb/backend.ts).
  const root = open({ path: dir, maxDbs: 32 });
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => (closing ??= root.close());
  return {
    root,
    dir,
    close,
    reopen: async () => {
      await close();
      return envAt(dir);
    },
    dispose: async () => {
      await close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const VERDICTS: Readonly<Record<DecisionStatus, Verdict>> = { approved: "approve", pending_override: "escalate", rejected: "reject" };

export interface DecisionSpec {
  readonly executionId: string;
  readonly recordedAt: string;
  readonly policyId?: string;
  readonly status?: DecisionStatus;
  /** The legacy `POST /execute` shape (attestation variant 2). */
  readonly legacy?: boolean;
  readonly signalProvenance?: Readonly<Record<string, unknown>>;
}

/** A decision record with a structurally complete (unsigned) attestation: the log never verifies signatures. */
export function decision(spec: DecisionSpec): DecisionAudit {
  const status = spec.status ?? "approved";
  const outcome = { action: VERDICTS[status], requires_override: status === "pending_override", reason: `reason of ${spec.executionId}` };
  const common = {
    executionId: spec.executionId,
    execution_fingerprint: executionFingerprint(spec.executionId),
    policyId: spec.policyId ?? "payments",
    policyVersion: "1.2.0",
    schemaVersion: "1.0.0",
    runtimeVersion: "0.1.0",
    runtimeHash: "a".repeat(64),
    actionType: "payment.transfer",
    actionBinding: { amount: 10 },
    issuedAt: spec.recordedAt,
    signalsHash: "b".repeat(64),
    execution_state: status === "pending_override" ? "pending_override" : "completed",
    signature: "c2lnbmF0dXJl",
  } as const;
  const attestation: AttestationV1 | AttestationV2 = spec.legacy
    ? {
        ...common,
        decision: outcome,
        bundleHash: "d".repeat(64),
        manifestHash: "e".repeat(64),
        manifestSignature: "bWFuaWZlc3Q=",
        trustRootVersion: "1",
        signerKeyId: "legacy-key",
        evaluatorHash: "f".repeat(64),
        evaluatorSemanticHash: "0".repeat(64),
        evaluatorArtifactHash: "1".repeat(64),
        releaseManifestHash: "2".repeat(64),
      }
    : {
        ...common,
        decision: { status: "decided", outcome },
        provenance: {
          provenanceVersion: PROVENANCE_VERSION,
          bundleHash: "d".repeat(64),
          manifestHash: "e".repeat(64),
          trustRootVersion: "1",
          signerKeyId: "key-1",
        },
      };
  return {
    executionId: spec.executionId,
    endpoint: spec.legacy ? "execute" : "evaluate",
    status,
    ruleMatched: `rule-${status}`,
    attestation,
    ...(spec.signalProvenance === undefined ? {} : { signalProvenance: spec.signalProvenance }),
    recordedAt: spec.recordedAt,
  };
}

/** ISO time `ms` milliseconds after 2025-03-10T00:00:00Z. */
export function at(ms: number): string {
  return new Date(Date.UTC(2025, 2, 10) + ms).toISOString();
}
