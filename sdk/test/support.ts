/**
 * Helpers of the SDK suite: a REAL listening sidecar (sidecar/test/support: fresh LMDB data dir, the fixture
 * policies, random ports) with clients for both surfaces, the sidecar's public key as an application pins it,
 * unique ids, and a complete Business Transaction.
 */
import { createPrivateKey, createPublicKey, randomUUID } from "node:crypto";
import { cp, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GovernanceClient, TransactionClient, type ClientOptions, type ExecuteTransactionRequest } from "@writ/sdk";
import { TRANSFER_SIGNALS, fixturePoliciesRoot } from "../../sidecar/test/support/policies.js";
import { API_KEY, startTestSidecar, type TestSidecar } from "../../sidecar/test/support/sidecar.js";

export { API_KEY, TRANSFER_SIGNALS, fixturePoliciesRoot };

/** Escalates above 10000 (conformance fixture 1.0.0). */
export const TRANSFER = { policyId: "conformance.transfer", policyVersion: "1.0.0" } as const;
/** No catch-all: `{flag: false}` is undecided (SYS-006). */
export const UNDECIDED = { policyId: "conformance.undecided", policyVersion: "1.0.0" } as const;

/** A unique executionId: tests share a sidecar, and an executionId is consumed once. */
export function uid(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

export interface Running {
  readonly sidecar: TestSidecar;
  readonly a: GovernanceClient;
  /** Surface B's client; its listener is started only when asked for. */
  readonly b: TransactionClient | null;
  /** The SPKI PEM of the sidecar's signing key: what an application pins. */
  readonly publicKeyPem: string;
  /** Another client of Surface A, with other options (closed with the sidecar). */
  client(options: Partial<ClientOptions>): GovernanceClient;
  close(): Promise<void>;
}

export async function startSidecar(env: Record<string, string> = {}, options: { readonly surfaceB?: boolean } = {}): Promise<Running> {
  const sidecar = await startTestSidecar(env, { surfaceB: options.surfaceB ?? false });
  const others: GovernanceClient[] = [];
  const client = (more: Partial<ClientOptions> = {}) => new GovernanceClient({ baseUrl: sidecar.url, apiKey: API_KEY, ...more });
  const a = client();
  const b = sidecar.urls.b === null ? null : new TransactionClient({ baseUrl: sidecar.urls.b, apiKey: API_KEY });
  const signingKey = await readFile(join(sidecar.dataDir, "signing.key"), "utf8");
  return {
    sidecar,
    a,
    b,
    publicKeyPem: createPublicKey(createPrivateKey(signingKey)).export({ type: "spki", format: "pem" }).toString(),
    client(more) {
      const c = client(more);
      others.push(c);
      return c;
    },
    async close() {
      await Promise.all([a, ...(b ? [b] : []), ...others].map((c) => c.close()));
      await sidecar.close();
    },
  };
}

/** A copy of the fixture policies root, to break a bundle in. */
export async function copyOfFixturePolicies(): Promise<string> {
  const copy = await mkdtemp(join(tmpdir(), "writ-sdk-policies-"));
  await cp(await fixturePoliciesRoot(), copy, { recursive: true });
  return copy;
}

const AT = "2026-03-01T10:00:00.000Z";

/** A complete Business Transaction (spec 2.13) under conformance.transfer 1.0.0, approved unless `signals` say otherwise. */
export function businessTransaction(signals: Readonly<Record<string, unknown>> = TRANSFER_SIGNALS.approved): ExecuteTransactionRequest {
  const id = randomUUID();
  const authorityId = randomUUID();
  const authorizationId = randomUUID();
  return {
    businessTransactionId: id,
    metadata: { businessTransactionId: id, correlationId: randomUUID(), createdBy: "erp@example.com", createdAt: AT },
    authority: { authorityId, authorityType: "USER", principalId: randomUUID(), displayName: "Alice Example", issuedAt: AT },
    authorization: { authorizationId, authorityId, purpose: "supplier payment", authorizedAt: AT },
    intent: {
      intentId: randomUUID(),
      authorizationId,
      action: "transfer.execute",
      resource: "account/DE89370400440532013000",
      issuedAt: AT,
    },
    policy: { name: TRANSFER.policyId, version: TRANSFER.policyVersion },
    signals,
  };
}
