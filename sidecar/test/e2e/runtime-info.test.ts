/**
 * What the sidecar says about itself (spec 2.11, 4.1), on a real listening sidecar: `GET /health` (fields, types,
 * `verification`, `audit_db`, `signing_mode` under each configuration), the runtime manifest and capabilities, the
 * policy schema endpoint of the recommended workflow's first step (spec 1.9), and the Prometheus metrics.
 */
import { createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRANSFER_SIGNALS, fixturePoliciesRoot } from "../support/policies.js";
import {
  HEX64,
  ISO_INSTANT,
  PAYLOAD,
  TRANSFER,
  answer,
  evaluate,
  independentlyVerifies,
  publicKeyOf,
  publicKeyPemOf,
  sha256OfJcs,
  startE2eSidecar,
  type E2eSidecar,
} from "../support/e2e.js";

let s: E2eSidecar;
beforeAll(async () => {
  s = await startE2eSidecar();
});
afterAll(async () => {
  await s.close();
});

interface Health {
  status: string;
  runtimeVersion: string;
  runtimeHash: string;
  verification: "ok" | "error";
  audit_db: boolean;
  signing_mode: "env" | "disk";
  capabilities: string[];
  supportedSchemaVersions: string[];
  ready: boolean;
  bundles: { served: number };
  instanceId: string | null;
  event_loop_lag_ms: number;
}
interface Manifest {
  version: string;
  runtimeHash: string;
  capabilities: string[];
  supportedSchemaVersions: string[];
  startedAt: string;
  manifestHash: string;
  signedManifest: Record<string, unknown> & { signerKeyId: string };
}

const stringList = expect.arrayContaining([expect.any(String)]);

/** GET /health needs no key (spec 5.2). */
async function health(x: E2eSidecar): Promise<Health> {
  const r = await x.send<Health>("GET", "/health");
  expect(r.status).toBe(200);
  return r.body;
}

describe("GET /health (spec 2.11)", () => {
  it("has exactly the spec's fields with their types (and writ's `store`, `ready`, `bundles` and `instanceId`); signing works and the audit database is connected", async () => {
    const manifest = (await s.call<Manifest>("GET", "/runtime/manifest")).body;
    const body = await health(s);
    expect(body).toEqual({
      status: "ok",
      runtimeVersion: manifest.version,
      runtimeHash: expect.stringMatching(HEX64),
      verification: "ok",
      audit_db: true,
      // The key file generated in the data dir.
      signing_mode: "disk",
      capabilities: stringList,
      supportedSchemaVersions: stringList,
      // writ's addition: whether the data dir takes writes (docs/sidecar.md, "A full disk").
      store: { status: "ok" },
      // writ's addition: readiness (docs/bundles.md, "Readiness"): every fixture bundle verified at start.
      ready: true,
      bundles: { ready: true, source: "directory", served: expect.any(Number), conflicts: 0 },
      // writ's addition: the instance id, the id of its tamper-evident audit record log (docs/audit.md): a UUID made in
      // the data dir at its first start.
      instanceId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      // writ's addition: the largest event-loop delay of the last 5 seconds, in ms (docs/sidecar.md, "Metrics").
      event_loop_lag_ms: expect.any(Number),
    });
    expect(Number.isInteger(body.event_loop_lag_ms) && body.event_loop_lag_ms >= 0).toBe(true);
    expect(body.bundles.served).toBeGreaterThan(0);
    expect(body.runtimeHash).toBe(manifest.runtimeHash);
    expect(body.capabilities).toEqual(manifest.capabilities);
    expect(body.supportedSchemaVersions).toEqual(manifest.supportedSchemaVersions);
    // The capability names the spec shows as examples.
    expect(body.capabilities).toEqual(expect.arrayContaining(["replay-protection", "ed25519-signing"]));
  });

  it("audit_db is false with audit off, and execution goes on (spec 7)", async () => {
    const off = await startE2eSidecar({ SERVICE_AUDIT: "off" });
    try {
      expect(await health(off)).toMatchObject({ status: "ok", audit_db: false, verification: "ok", instanceId: null });
      expect((await evaluate(off, TRANSFER_SIGNALS.approved)).status).toBe(200);
    } finally {
      await off.close();
    }
  });

  it("signing_mode is env with SERVICE_SIGNING_KEY, and that key signs", async () => {
    const pem = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const env = await startE2eSidecar({ SERVICE_SIGNING_KEY: pem });
    try {
      expect(await health(env)).toMatchObject({ verification: "ok", signing_mode: "env" });
      const attestation = (await evaluate(env, TRANSFER_SIGNALS.approved)).body.attestation;
      const spki = (key: KeyObject) => key.export({ type: "spki", format: "pem" }).toString();
      expect(independentlyVerifies(PAYLOAD.attestation, attestation, spki(createPublicKey(pem)))).toBe(true);
      expect(independentlyVerifies(PAYLOAD.attestation, attestation, spki(generateKeyPairSync("ed25519").publicKey))).toBe(false);
    } finally {
      await env.close();
    }
  });

  it("verification is error without a signing key (the key is misconfigured, spec 7)", async () => {
    const keyless = await startE2eSidecar({ SERVICE_DATA_DIR: undefined, SERVICE_REPLAY_STORE: "memory" });
    try {
      expect(await health(keyless)).toMatchObject({ status: "ok", verification: "error", audit_db: false });
    } finally {
      await keyless.close();
    }
  });
});

describe("GET /runtime/manifest and /runtime/capabilities", () => {
  it("the manifest has the spec's fields (strings and lists of strings) and writ's signed manifest", async () => {
    const r = await s.call<Manifest>("GET", "/runtime/manifest");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      runtimeHash: expect.stringMatching(HEX64),
      capabilities: stringList,
      supportedSchemaVersions: stringList,
      startedAt: expect.stringMatching(ISO_INSTANT),
      manifestHash: expect.stringMatching(HEX64),
      signedManifest: expect.any(Object),
    });
    expect(Date.parse(r.body.startedAt)).toBeLessThanOrEqual(Date.now());
  });

  it("the signed manifest is signed in its own domain, and attestations name it by hash", async () => {
    const { manifestHash, signedManifest } = (await s.call<Manifest>("GET", "/runtime/manifest")).body;
    const pem = await publicKeyPemOf(s);
    expect(signedManifest.signerKeyId).toBe((await publicKeyOf(s)).keyId);
    expect(independentlyVerifies(PAYLOAD.runtimeManifest, signedManifest, pem)).toBe(true);
    // Spec 2.2: runtime manifests and attestations are separate signing domains.
    expect(independentlyVerifies(PAYLOAD.attestation, signedManifest, pem)).toBe(false);
    expect(sha256OfJcs(signedManifest)).toBe(manifestHash);
    const attestation = (await evaluate(s, TRANSFER_SIGNALS.approved)).body.attestation;
    expect(attestation.provenance.manifestHash).toBe(manifestHash);
  });

  it("capabilities are the manifest's", async () => {
    const manifest = (await s.call<Manifest>("GET", "/runtime/manifest")).body;
    expect(answer(await s.call("GET", "/runtime/capabilities"))).toEqual({ status: 200, body: { capabilities: manifest.capabilities } });
  });
});

describe("GET /policies/{policyId}/versions/{version}/schema (spec 1.9 step 1)", () => {
  it("answers the signals schema, the governed action and the bundle hash attestations carry", async () => {
    const r = await s.call("GET", `/policies/${TRANSFER.policyId}/versions/${TRANSFER.policyVersion}/schema`);
    const manifest = JSON.parse(
      await readFile(join(await fixturePoliciesRoot(), TRANSFER.policyId, TRANSFER.policyVersion, "bundle.manifest.json"), "utf8"),
    ) as {
      bundle_hash: string;
    };
    const signalsSchema = JSON.parse(
      await readFile(join(await fixturePoliciesRoot(), TRANSFER.policyId, TRANSFER.policyVersion, "signals.schema.json"), "utf8"),
    ) as unknown;
    expect(answer(r)).toEqual({
      status: 200,
      body: {
        ...TRANSFER,
        schemaVersion: "1.0.0",
        bundleHash: manifest.bundle_hash,
        governs: { actionType: "transfer.execute", binding: ["amount", "currency"] },
        signalsSchema,
      },
    });
    expect(signalsSchema).toMatchObject({ required: ["amount", "currency", "kyc_verified", "risk_score"], additionalProperties: false });
    expect((await evaluate(s, TRANSFER_SIGNALS.approved)).body.attestation.provenance.bundleHash).toBe(manifest.bundle_hash);
  });

  it("each version is its own bundle", async () => {
    const v1 = await s.call<{ bundleHash: string }>("GET", `/policies/${TRANSFER.policyId}/versions/1.0.0/schema`);
    const v11 = await s.call<{ bundleHash: string; policyVersion: string }>("GET", `/policies/${TRANSFER.policyId}/versions/1.1.0/schema`);
    expect(v11.status).toBe(200);
    expect(v11.body.policyVersion).toBe("1.1.0");
    expect(v11.body.bundleHash).not.toBe(v1.body.bundleHash);
  });

  it.each([
    ["an unknown version", `/policies/${TRANSFER.policyId}/versions/9.9.9/schema`],
    ["an unknown policy", "/policies/nobody.knows/versions/1.0.0/schema"],
    ["a version that is not exact semver", `/policies/${TRANSFER.policyId}/versions/v1.0.0/schema`],
    ["a policy id that is not one", `/policies/Conformance.Transfer/versions/1.0.0/schema`],
    ["a path escaping the policies root", `/policies/..%2F..%2Fetc/versions/1.0.0/schema`],
    ["a dot-dot version", `/policies/${TRANSFER.policyId}/versions/..%2F1.1.0/schema`],
  ])("404 Policy not found for %s", async (_name, path) => {
    expect(answer(await s.call("GET", path))).toEqual({ status: 404, body: { error: "Policy not found" } });
  });
});

describe("GET /metrics", () => {
  it("needs the key", async () => {
    expect(answer(await s.send("GET", "/metrics"))).toEqual({ status: 401, body: { error: "Unauthorized" } });
  });

  it("is Prometheus text exposition with request timings and signed decisions by policy version, verdict and rule", async () => {
    const fresh = await startE2eSidecar();
    try {
      await evaluate(fresh, TRANSFER_SIGNALS.approved);
      await evaluate(fresh, TRANSFER_SIGNALS.approved);
      await evaluate(fresh, TRANSFER_SIGNALS.pending);
      await fresh.send("GET", "/health");
      const r = await fresh.call<string>("GET", "/metrics");
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      // Every line is a comment (# HELP / # TYPE) or a sample: name{labels} value. A gauge with no samples yet (the
      // event-loop lag of a fresh process) is NaN, which prom-client spells `Nan`: Prometheus parses the special
      // values with Go's strconv.ParseFloat, which ignores their case.
      for (const line of r.body.split("\n").filter((l) => l !== "")) {
        expect(line).toMatch(
          /^(# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .*|[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? (-?[0-9.e+-]+|[Nn][Aa][Nn]|[+-]Inf))$/,
        );
      }
      expect(r.body).toContain("# TYPE writ_http_request_duration_seconds histogram");
      expect(r.body).toContain('writ_http_request_duration_seconds_count{surface="a",method="GET",route="/health",status="200"} 1');
      const labels = 'surface="a",route="/evaluate",policy_id="conformance.transfer",policy_version="1.0.0"';
      expect(r.body).toContain(`writ_decisions_total{${labels},verdict="approve",rule="verified_customer"} 2`);
      expect(r.body).toContain(`writ_decisions_total{${labels},verdict="escalate",rule="large_transfer"} 1`);
    } finally {
      await fresh.close();
    }
  });
});
