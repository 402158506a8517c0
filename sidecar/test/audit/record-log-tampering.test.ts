/**
 * Tampering with the LMDB trail is detected (issue 15, "Done when"): 200 tamperings drawn from a seeded generator
 * across record kinds and positions (an edit, a removal, two records swapped, a record inserted around the log), each
 * applied to the store behind a checkpointed log, then undone. Each time the export's verifier (runtime
 * `ExportVerifier`, what `writ audit verify` runs) fails and names the record: its position, or the record stored
 * around the log. The untouched log verifies before and after.
 */
import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExportVerifier, loadSigningKeyPem, type ExportReport } from "@writ/runtime";
import type { Database, Key } from "lmdb";
import { AUDIT_DATABASES, LmdbAuditLog } from "../../src/audit/lmdb-audit-log.js";
import { RECORD_LOG_DATABASES } from "../../src/audit/record-log/lmdb-record-log.js";
import { parseLocator } from "../../src/audit/record-log/locator.js";
import { prng } from "../durability/load.js";
import { at, decision, tempEnv, type TempEnv } from "./support.js";

const SEED = 15_015;
const TAMPERINGS = 200;
const key = loadSigningKeyPem(generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString());

let env: TempEnv;
let audit: LmdbAuditLog;
/** Position to where its record is stored: a database and a key. */
let places: { db: Database<unknown, Key>; key: Key; kind: string }[];

function verify(): ExportReport {
  const verifier = new ExportVerifier([key.publicKey]);
  for (const line of audit.recordLog!.export(0)) verifier.add(JSON.parse(JSON.stringify(line)));
  return verifier.finish();
}

beforeAll(async () => {
  env = await tempEnv();
  audit = new LmdbAuditLog(env.root, { checkpoints: { key, intervalMs: 3_600_000, everyRecords: 1_000_000_000 } });
  for (let i = 0; i < 40; i++) {
    const executionId = `exec-${i}`;
    audit.writeRecord({ kind: "decision", body: decision({ executionId, recordedAt: at(i * 10), status: i % 3 === 0 ? "pending_override" : "approved" }) });
    if (i % 3 === 0) {
      audit.writeRecord({ kind: "override", body: { executionId, approved: i % 2 === 0, approvedBy: "ana", approverRole: "ops", reason: `r${i}`, overrideId: `o-${i}`, record: {} as never, recordedAt: at(i * 10 + 1) } });
    }
    if (i % 4 === 0) audit.writeRecord({ kind: "confirmation", body: { executionId, match: true, proof: {} as never, recordedAt: at(i * 10 + 2) } });
    audit.recordVerification({ executionId, valid: i % 2 === 0, checks: { signature: "verified" }, errors: [], recordedAt: at(i * 10 + 3) });
    if (i % 5 === 0) audit.recordSecurityEvent({ type: "authentication_failed", method: "GET", path: "/audit/stats", ip: `10.1.${i}.1`, detail: "wrong key" });
    // Three checkpoints along the way: tamperings land before, between and after them.
    if (i % 13 === 12) {
      await audit.flushed();
      await audit.recordLog!.checkpointNow();
    }
  }
  await audit.flushed();
  await audit.recordLog!.checkpointNow();
  const databases = {
    decision: env.root.openDB<unknown, Key>(AUDIT_DATABASES.decisionRecords, { encoding: "json" }),
    beside: env.root.openDB<unknown, Key>(AUDIT_DATABASES.decisions, { encoding: "json" }),
    verification: env.root.openDB<unknown, Key>(AUDIT_DATABASES.verifications, { encoding: "json" }),
    security: env.root.openDB<unknown, Key>(AUDIT_DATABASES.security, { encoding: "json" }),
  };
  const entries = env.root.openDB<{ kind: string; locator: string }, number>(RECORD_LOG_DATABASES.entries, { encoding: "json" });
  places = Array.from(entries.getRange({}), ({ value }) => {
    const { kind, fields } = parseLocator(value.locator);
    if (kind === "decision") return { db: databases.decision, key: [Number(fields[0]), fields[1]!], kind };
    if (kind === "override" || kind === "confirmation") return { db: databases.beside, key: `${fields[0]}/${kind}`, kind };
    return { db: kind === "verification" ? databases.verification : databases.security, key: [Number(fields[0]), Number(fields[1])], kind };
  });
});

afterAll(async () => {
  await audit.close();
  await env.dispose();
});

describe("tampering with the LMDB trail", () => {
  it(`is detected and named, ${TAMPERINGS} times across kinds and positions; the untouched log verifies`, async () => {
    expect(verify()).toMatchObject({ valid: true, entries: places.length, checkpoints: 4 });
    const random = prng(SEED);
    const pick = (n: number) => Math.floor(random() * n);
    const seen = { edit: 0, remove: 0, swap: 0, insert: 0 };
    for (let t = 0; t < TAMPERINGS; t++) {
      const operation = (["edit", "remove", "swap", "insert"] as const)[t % 4]!;
      const position = pick(places.length);
      const place = places[position]!;
      const original = place.db.get(place.key);
      let undo: () => Promise<unknown>;
      let named: (report: ExportReport) => boolean;
      if (operation === "edit") {
        await place.db.put(place.key, { ...(original as object), tampered: t });
        undo = () => place.db.put(place.key, original);
        named = (r) => r.failures[0]?.position === position;
      } else if (operation === "remove") {
        await place.db.remove(place.key);
        undo = () => place.db.put(place.key, original);
        named = (r) => r.failures[0]?.position === position && /removed/.test(r.failures[0].reason);
      } else if (operation === "swap") {
        // Another record of the same kind, so the store's shape stays plausible.
        const others = places.map((_, i) => i).filter((i) => i !== position && places[i]!.kind === place.kind && places[i]!.db === place.db);
        const other = others[pick(others.length)]!;
        const second = places[other]!;
        const value = second.db.get(second.key);
        await place.db.put(place.key, value);
        await second.db.put(second.key, original);
        undo = async () => {
          await place.db.put(place.key, original);
          await second.db.put(second.key, value);
        };
        named = (r) => r.failures[0]?.position === Math.min(position, other);
      } else {
        // A record put into the store around the log: a key no logged record has.
        const forged = Array.isArray(place.key) ? [(place.key[0] as number) + 1, typeof place.key[1] === "number" ? 9_000 + t : `f${t}`] : `forged${t}/${place.kind}`;
        await place.db.put(forged, original);
        undo = () => place.db.remove(forged);
        named = (r) => r.failures.some((f) => /stored but not in the log/.test(f.reason));
      }
      const report = verify();
      expect(report.valid, `${operation} at position ${position} (${place.kind}) went unnoticed`).toBe(false);
      expect(named(report), `${operation} at position ${position} (${place.kind}): ${JSON.stringify(report.failures[0])}`).toBe(true);
      seen[operation] += 1;
      await undo();
    }
    expect(seen).toEqual({ edit: 50, remove: 50, swap: 50, insert: 50 });
    expect(verify()).toMatchObject({ valid: true });
  });
});
