/**
 * A fleet on one remote bundle source: three BUILT sidecars pull from one HTTP server in this
 * process while a load runs against all three, every request naming `conformance.transfer@stable`.
 * - A new version published with `stable` moved to it is served by all three within the poll interval plus 2 s,
 *   with no restart and no failed request.
 * - A corrupted, unsigned, rolled-back or hash-changed publication is refused by all three (each says why on
 *   `/health`), and the set before keeps serving.
 * - The server's disappearance changes nothing; when it returns, the next publication is served.
 * Each sidecar keeps its own LMDB data dir: what is shared here is the bundle source.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Health } from "@writ/wire";
import { API_KEY } from "../durability/load.js";
import { KeepAliveClient, killAllBuiltSidecars, startBuiltSidecar, type BuiltSidecar } from "../support/built-sidecar.js";
import {
  BundleServer,
  POLICY_ID,
  bundleKey,
  sourceFiles,
  transferArchive,
  type BundleKey,
  type Publication,
} from "../support/bundle-source.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";

const POLL_MS = 500;
const SIDECARS = 3;
/** `pending` signals (amount 20,000) escalate under 1.0.0 (threshold 10,000), are approved under 1.1.0 (50,000). */
const EXPECTED = { "1.0.0": "pending_override", "1.1.0": "approved", "1.2.0": "approved" } as const;

let server: BundleServer;
let signer: BundleKey;
let dir: string;
const sidecars: BuiltSidecar[] = [];
const archives = new Map<string, Uint8Array>();

/** What each sidecar served, in order: the concrete version of each answer, with when it came. */
const served: { at: number; version: string }[][] = [];
const failures: string[] = [];
let loading = true;

const stable = (version: string) => [{ policyId: POLICY_ID, alias: "stable", version }];
function publish(publication: Publication): number {
  server.files = sourceFiles(publication, signer.key);
  return Date.now();
}

/** One worker per sidecar, evaluating `stable` back to back over a keep-alive connection until the test ends. */
async function load(i: number): Promise<void> {
  const client = new KeepAliveClient(sidecars[i]!.url, API_KEY, 1);
  try {
    while (loading) {
      const body = { executionId: randomUUID(), policyId: POLICY_ID, policyVersion: "stable", verifiedSignals: TRANSFER_SIGNALS.pending };
      const answer = await client.json("POST", "/evaluate", body);
      const decided = answer.body as { status?: string; attestation?: { policyVersion?: string } };
      const version = decided.attestation?.policyVersion ?? "";
      if (answer.status !== 200 || decided.status !== EXPECTED[version as keyof typeof EXPECTED]) {
        failures.push(`sidecar ${i}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
      }
      served[i]!.push({ at: Date.now(), version });
    }
  } finally {
    client.close();
  }
}

async function health(i: number): Promise<Health> {
  return (await (await fetch(`${sidecars[i]!.url}/health`)).json()) as Health;
}

/** Waits until every sidecar's health satisfies `ok`, for at most `ms`. */
async function untilAll(ms: number, what: string, ok: (h: Health) => boolean): Promise<Health[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const all = await Promise.all(sidecars.map((_, i) => health(i)));
    if (all.every(ok)) return all;
    if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms: ${JSON.stringify(all.map((h) => h.bundles))}`);
    await sleep(50);
  }
}

const lastVersion = (i: number) => served[i]!.at(-1)?.version;

let workers: Promise<void>[] = [];

beforeAll(async () => {
  server = await BundleServer.start();
  signer = await bundleKey();
  dir = await mkdtemp(join(tmpdir(), "writ-fleet-bundles-"));
  archives.set("1.0.0", transferArchive("1.0.0", signer.key));
  archives.set("1.1.0", transferArchive("1.1.0", signer.key, 50_000));
  archives.set("1.2.0", transferArchive("1.2.0", signer.key, 60_000));
  publish({ serial: 1, archives: new Map([["1.0.0", archives.get("1.0.0")!]]), aliases: stable("1.0.0") });
  for (let i = 0; i < SIDECARS; i++) {
    sidecars.push(
      await startBuiltSidecar({
        SERVICE_API_KEY: API_KEY,
        SERVICE_DATA_DIR: join(dir, `sidecar-${i}`),
        SERVICE_BUNDLE_SOURCE_URL: server.url,
        SERVICE_BUNDLE_KEYS: signer.publicKeyFile,
        SERVICE_BUNDLE_POLL_INTERVAL_MS: String(POLL_MS),
        SERVICE_BUNDLE_FETCH_TIMEOUT_MS: "1000",
        SERVICE_PORT: "0",
        SERVICE_B_PORT: "off",
        SERVICE_LOG_LEVEL: "warn",
      }),
    );
    served.push([]);
  }
  workers = sidecars.map((_, i) => load(i));
}, 60_000);

afterAll(async () => {
  loading = false;
  await Promise.allSettled(workers);
  await killAllBuiltSidecars();
  await server?.stop().catch(() => undefined);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("three sidecars on one bundle source, under load", () => {
  it("serve a new version within the poll interval plus 2 s, with no failed request", async () => {
    await untilAll(5_000, "every sidecar serves serial 1", (h) => h.ready && h.bundles.remote?.serial === 1);
    while (served.some((s) => s.length === 0)) await sleep(20);
    expect(sidecars.map((_, i) => lastVersion(i))).toEqual(["1.0.0", "1.0.0", "1.0.0"]);

    const published = publish({ serial: 2, archives: new Map([...archives].filter(([v]) => v !== "1.2.0")), aliases: stable("1.1.0") });
    await untilAll(POLL_MS + 2_000, "every sidecar serves serial 2", (h) => h.bundles.remote?.serial === 2);
    await sleep(200);
    const delays: number[] = [];
    for (let i = 0; i < SIDECARS; i++) {
      const switched = served[i]!.find((s) => s.version === "1.1.0" && s.at >= published);
      expect(switched, `sidecar ${i} never answered with 1.1.0`).toBeDefined();
      delays.push(switched!.at - published);
      // Once switched, never back.
      expect(served[i]!.filter((s) => s.at > switched!.at).every((s) => s.version === "1.1.0")).toBe(true);
    }
    console.log(`bundle fleet: 1.1.0 served by each sidecar ${delays.join(", ")} ms after publication (poll interval ${POLL_MS} ms)`);
    expect(Math.max(...delays)).toBeLessThanOrEqual(POLL_MS + 2_000);
    expect(failures).toEqual([]);
  });

  const refusals: [string, () => Map<string, Uint8Array>, RegExp][] = [
    [
      "a corrupted archive",
      () => {
        const files = sourceFiles({ serial: 3, archives: new Map(archives), aliases: stable("1.2.0") }, signer.key);
        const name = `${POLICY_ID}@1.2.0.bundle.json`;
        files.set(name, Buffer.from(Buffer.from(files.get(name)!).toString("utf8").replace("verified customer", "VERIFIED customer")));
        return files;
      },
      /does not match its hash/,
    ],
    [
      "an unsigned archive",
      () =>
        sourceFiles(
          {
            serial: 3,
            archives: new Map([...archives].map(([v, a]) => [v, v === "1.2.0" ? transferArchive("1.2.0", null, 60_000) : a])),
            aliases: stable("1.2.0"),
          },
          signer.key,
        ),
      /not signed/,
    ],
    [
      "a rolled-back index",
      () => sourceFiles({ serial: 1, archives: new Map([["1.0.0", archives.get("1.0.0")!]]), aliases: stable("1.0.0") }, signer.key),
      /rollback/,
    ],
    [
      "a version whose bytes changed",
      () =>
        sourceFiles(
          {
            serial: 3,
            archives: new Map([
              ["1.0.0", archives.get("1.0.0")!],
              ["1.1.0", transferArchive("1.1.0", signer.key, 1)],
            ]),
            aliases: stable("1.1.0"),
          },
          signer.key,
        ),
      /a version is immutable/,
    ],
  ];
  it.each(refusals)("refuse %s, all three, and keep serving the set before", async (_name, files, why) => {
    server.files = files();
    const refused = await untilAll(POLL_MS * 3 + 2_000, "every sidecar refuses it", (h) => why.test(h.bundles.remote?.lastError ?? ""));
    expect(refused.map((h) => h.bundles.remote?.serial)).toEqual([2, 2, 2]);
    expect(refused.every((h) => h.ready)).toBe(true);
    await sleep(POLL_MS);
    expect(sidecars.map((_, i) => lastVersion(i))).toEqual(["1.1.0", "1.1.0", "1.1.0"]);
    expect(failures).toEqual([]);
  });

  it("keep serving while the source is gone, and serve the next publication once it returns", async () => {
    publish({ serial: 2, archives: new Map([...archives].filter(([v]) => v !== "1.2.0")), aliases: stable("1.1.0") });
    await server.stop();
    await untilAll(POLL_MS * 4 + 2_000, "every sidecar notices the source is gone", (h) => (h.bundles.remote?.failures ?? 0) >= 2);
    const during = served.map((s) => s.length);
    await sleep(POLL_MS * 2);
    expect(served.map((s, i) => s.length > during[i]!)).toEqual([true, true, true]);
    expect(sidecars.map((_, i) => lastVersion(i))).toEqual(["1.1.0", "1.1.0", "1.1.0"]);
    expect((await Promise.all(sidecars.map((_, i) => health(i)))).every((h) => h.ready)).toBe(true);

    publish({ serial: 4, archives: new Map(archives), aliases: stable("1.2.0") });
    await server.restart();
    // After failures the sidecars back off (at most 8 intervals, jittered), so the return is noticed within that.
    await untilAll(
      POLL_MS * 8 + 2_000,
      "every sidecar serves serial 4",
      (h) => h.bundles.remote?.serial === 4 && h.bundles.remote.lastError === null,
    );
    await sleep(300);
    expect(sidecars.map((_, i) => lastVersion(i))).toEqual(["1.2.0", "1.2.0", "1.2.0"]);
    expect(failures).toEqual([]);
    const total = served.reduce((n, s) => n + s.length, 0);
    console.log(`bundle fleet: ${total} decisions over ${SIDECARS} sidecars, none failed, across 4 publications, 4 refusals and an outage`);
  });
});
