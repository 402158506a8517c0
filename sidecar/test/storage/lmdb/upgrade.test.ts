/**
 * A data dir made by main `7a9b692` (the release before coded records, array replay entries and pending contexts
 * without the attestation), opened by this one and read as it is: its decisions list and read back, its replay
 * entries refuse a replay, its pending override (a context holding the attestation) resolves, new decisions are
 * made and coded beside the old JSON ones, its time index is dropped, and the export of its record log verifies.
 *
 * The fixture (fixtures/data-dir-7a9b692.tar.gz: `data/` with data.mdb and signing.key, `policies/` and
 * `bundle-key.pub`) was made by running, in a checkout of 7a9b692 after `npm install && npm run build`, a script that
 * opens the sidecar's backend on an empty data dir as the soak's seeder does (bench/soak/store.ts), consumes 75
 * decisions of payments.transfer through `bench/soak/decisions.ts` (`upgrade-0` … `upgrade-74`, a second apart from
 * 2026-11-01; a third escalated, their pending contexts holding the attestation), resolves the first pending one with
 * the runtime's `resolveOverride` (approved), records one verification, and signs a checkpoint.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  ExportVerifier,
  createSigner,
  createTrustRoot,
  executionFingerprint,
  resolveOverride,
  type ExportLine,
  type SigningKey,
} from "@writ/runtime";
import { open } from "lmdb";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { signerOf } from "../../audit/record-log-contract.js";
import { DecisionMaker } from "../../../../bench/soak/decisions.js";
import { loadCases } from "../../../../bench/sidecar/policy-cases.js";
import { loadConfig } from "../../../src/config.js";
import { loadOrCreateSigningKey } from "../../../src/keys.js";
import type { StorageBackend } from "../../../src/storage/backend.js";
import { FORMER_DECISION_TIMES } from "../../../src/storage/lmdb/audit-log.js";
import { DECISION_RECORDS_DATABASE } from "../../../src/storage/lmdb/decision-records.js";
import { hasDatabase } from "../../../src/storage/lmdb/named-databases.js";
import { openBackend } from "../../../src/storage/registry.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/data-dir-7a9b692.tar.gz", import.meta.url));
const BEFORE = 75;
const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `upgrade-${from + i}`);

describe("a data dir made by 7a9b692", () => {
  let dir: string;
  let key: SigningKey;
  let backend: StorageBackend;

  const openIt = async () => {
    const config = loadConfig({
      SERVICE_API_KEY: "upgrade-fixture-api-key-0123456789abcdef",
      SERVICE_POLICIES_ROOT: join(dir, "policies"),
      SERVICE_BUNDLE_KEYS: join(dir, "bundle-key.pub"),
      SERVICE_DATA_DIR: join(dir, "data"),
      SERVICE_PORT: "0",
      SERVICE_B_PORT: "off",
    });
    key = (await loadOrCreateSigningKey(join(dir, "data", "signing.key"))).key;
    return openBackend(config, {}, [], signerOf(key));
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "writ-upgrade-"));
    execFileSync("tar", ["-xzf", FIXTURE, "-C", dir]);
    backend = await openIt();
  });
  afterEach(async () => {
    await backend.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("is read as it is, decides beside it, refuses its replays, resolves its pending override, and its export verifies", async () => {
    const { audit } = backend;
    const replay = backend.replay!;
    // Its decisions, newest first, and one by executionId (found through its replay entry's createdAt).
    const listed = await audit.listDecisions({ limit: 100, offset: 0 });
    expect(listed.map((row) => row.executionId)).toEqual(ids(0, BEFORE).reverse());
    expect(await audit.getDecision("upgrade-3")).toMatchObject({ executionId: "upgrade-3" });
    expect((await audit.stats()).total_decisions).toBe(String(BEFORE));

    // Its replay entries, in the object form, refuse a replay.
    for (const id of ["upgrade-0", "upgrade-1", "upgrade-74"])
      expect(await replay.consume(executionFingerprint(id))).toMatchObject({ ok: false, reason: "conflict" });

    // A pending override it left, whose context holds the attestation, resolves (its hash named by the record).
    const pending = [];
    for (const id of ids(0, BEFORE)) if ((await replay.read(executionFingerprint(id)))?.state === "pending_override") pending.push(id);
    expect(pending.length).toBeGreaterThan(10);
    const signer = createSigner(key, createTrustRoot("writ-local-1", [key.publicKey]));
    const human = { approvedBy: "ops@example.com", approverRole: "ops", reason: "checked after the upgrade" };
    const outcome = await resolveOverride({ executionId: pending[0]!, approved: false, ...human }, { store: replay, signer });
    expect(outcome.status).toBe("rejected");

    // New decisions, through the same write path as the old ones: coded from a shape's third record on.
    const maker = await DecisionMaker.create(
      join(dir, "policies"),
      join(dir, "bundle-key.pub"),
      key,
      (await loadCases()).valid.map((c) => c.signals),
    );
    for (let i = BEFORE; i < BEFORE + 100; i++) {
      const { fingerprint, options } = maker.make(i, `upgrade-${i}`, Date.UTC(2026, 11, 1) + i * 1_000);
      expect((await replay.consume(fingerprint, options)).ok).toBe(true);
      // A turn between decisions, as requests come: a shape's template is written between its second and third record.
      await new Promise((resolve) => setImmediate(resolve));
    }
    await audit.flushed();
    expect((await audit.listDecisions({ limit: 200, offset: 0 })).map((row) => row.executionId)).toEqual(ids(0, BEFORE + 100).reverse());
    expect(await audit.getDecision(`upgrade-${BEFORE + 99}`)).toMatchObject({ executionId: `upgrade-${BEFORE + 99}` });

    // The export of the whole log (old entries and new) verifies with the data dir's key.
    const log = audit.recordLog!;
    // Null when the background checkpointer has just covered every entry itself: the export ends at its checkpoint then.
    const checkpoint = (await log.checkpointNow()) ?? (await log.status())!.latest!;
    const verifier = new ExportVerifier([key.publicKey]);
    const lines: ExportLine[] = [];
    for await (const line of log.export(log.logId)) lines.push(line);
    for (const line of lines) verifier.add(JSON.parse(JSON.stringify(line)));
    expect(verifier.finish()).toMatchObject({ valid: true, entries: checkpoint.size });

    await backend.close();
    // What the data dir holds now: no time index; old records as JSON, most new ones coded.
    const root = open({ path: join(dir, "data"), maxDbs: 32, readOnly: true });
    try {
      expect(hasDatabase(root, FORMER_DECISION_TIMES)).toBe(false);
      const stored = Array.from(root.openDB<Buffer, [number, string]>(DECISION_RECORDS_DATABASE, { encoding: "binary" }).getRange({}));
      expect(stored.slice(0, BEFORE).every(({ value }) => value[0] === "{".charCodeAt(0))).toBe(true);
      expect(stored.slice(BEFORE).filter(({ value }) => value[0] === 1).length).toBeGreaterThan(50);
    } finally {
      await root.close();
    }
    backend = await openIt();
  });
});
