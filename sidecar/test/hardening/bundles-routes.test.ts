/**
 * A policy bundle that does not load, on every route that loads one, against a REAL sidecar serving both surfaces:
 * each answers within its spec status list (docs/errors.md), never 500 `internal error`, never a hang:
 * - `/evaluate` variant 1: 500 `Evaluation failed`;
 * - the dry run, `/execute`, `/simulate`, the schema route: 422 `policy bundle does not load` (they list no 500);
 * - Surface B `/policies/validate`: 404 `{valid: false, errors: [the reason]}`;
 * - Surface B `/execute` and `POST /transactions`: 500 `Evaluation failed`, as the variant 1 they run.
 * A failed load is not kept: the breakages follow one another on the same sidecar, and once the bundle is fixed every
 * route serves it. Before, a FIFO hung every route, an unreadable file was 500 `internal error`, and the dry run,
 * `/execute`, `/simulate` and the schema route answered 500 for any broken bundle.
 */
import { randomUUID } from "node:crypto";
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAYLOAD_TYPES, generateSigningKeyPair } from "@writ/runtime";
import { holdThreadPool, mkfifo } from "../../../runtime/test/bundle/stuck-reads.js";
import { TRANSFER, copyOfFixturePolicies } from "../support/e2e.js";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import { API_KEY, startTestSidecar, type TestSidecar } from "../support/sidecar.js";
import { businessTransaction } from "../surface-b/support.js";

const LOAD_TIMEOUT_MS = 300;
const EVALUATION_FAILED = { status: 500, body: { error: "Evaluation failed" } };
const DOES_NOT_LOAD = { status: 422, body: { error: "policy bundle does not load" } };

interface Route {
  readonly name: string;
  readonly surface: "a" | "b";
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly body?: () => unknown;
  /** The answer to a bundle that does not load; `reason` is the validate route's, for the breakage at hand. */
  readonly broken: (reason: string) => { status: number; body: unknown };
  readonly ok: number;
}

const transaction = () => businessTransaction({ policy: { name: TRANSFER.policyId, version: TRANSFER.policyVersion } });

const ROUTES: readonly Route[] = [
  {
    name: "POST /evaluate (variant 1)",
    surface: "a",
    method: "POST",
    path: "/evaluate",
    body: () => ({ executionId: randomUUID(), ...TRANSFER, verifiedSignals: TRANSFER_SIGNALS.approved }),
    broken: () => EVALUATION_FAILED,
    ok: 200,
  },
  {
    name: "POST /evaluate (dry run)",
    surface: "a",
    method: "POST",
    path: "/evaluate",
    body: () => ({ ...TRANSFER, signals: TRANSFER_SIGNALS.approved }),
    broken: () => DOES_NOT_LOAD,
    ok: 200,
  },
  {
    name: "POST /execute",
    surface: "a",
    method: "POST",
    path: "/execute",
    body: () => ({ executionId: randomUUID(), ...TRANSFER, signals: TRANSFER_SIGNALS.approved }),
    broken: () => DOES_NOT_LOAD,
    ok: 200,
  },
  {
    name: "POST /simulate",
    surface: "a",
    method: "POST",
    path: "/simulate",
    body: () => ({ ...TRANSFER, signals: TRANSFER_SIGNALS.approved }),
    broken: () => DOES_NOT_LOAD,
    ok: 200,
  },
  {
    name: "GET /policies/{policyId}/versions/{version}/schema",
    surface: "a",
    method: "GET",
    path: `/policies/${TRANSFER.policyId}/versions/${TRANSFER.policyVersion}/schema`,
    broken: () => DOES_NOT_LOAD,
    ok: 200,
  },
  {
    name: "Surface B POST /policies/validate",
    surface: "b",
    method: "POST",
    path: "/policies/validate",
    body: () => TRANSFER,
    broken: (reason) => ({
      status: 404,
      body: {
        valid: false,
        errors: [`bundle of policy \`${TRANSFER.policyId}\` version \`${TRANSFER.policyVersion}\` does not load: ${reason}`],
      },
    }),
    ok: 200,
  },
  {
    name: "Surface B POST /execute",
    surface: "b",
    method: "POST",
    path: "/execute",
    body: transaction,
    broken: () => EVALUATION_FAILED,
    ok: 200,
  },
  {
    name: "Surface B POST /transactions",
    surface: "b",
    method: "POST",
    path: "/transactions",
    body: transaction,
    broken: () => EVALUATION_FAILED,
    ok: 201,
  },
];

interface Breakage {
  readonly name: string;
  /** Breaks the bundle in `dir`. */
  readonly apply: (dir: string) => Promise<void>;
  /** The loader's reason, as `/policies/validate` reports it. */
  readonly reason: string;
}

const BREAKAGES: readonly Breakage[] = [
  {
    name: "a manifest that is not JSON",
    apply: (dir) => writeFile(join(dir, "bundle.manifest.json"), "{"),
    reason: "`bundle.manifest.json` is not valid JSON: unexpected end of input, expected a string key at line 1 column 2",
  },
  {
    name: "a file that does not match its hash",
    apply: async (dir) => writeFile(join(dir, "policy.ir.json"), `${await readFile(join(dir, "policy.ir.json"), "utf8")} `),
    reason: "file `policy.ir.json` does not match its hash in the manifest",
  },
  {
    name: "a bundle.sig that does not verify against the pinned key",
    apply: (dir) =>
      writeFile(
        join(dir, "bundle.sig"),
        JSON.stringify({ payloadType: PAYLOAD_TYPES.bundle, keyId: "k", signature: `${"A".repeat(86)}==` }),
      ),
    reason: "bundle signature does not verify against any trusted key",
  },
  {
    name: "a FIFO as bundle.sig",
    apply: async (dir) => mkfifo(join(dir, "bundle.sig")),
    reason: "`bundle.sig` is not a regular file (a FIFO)",
  },
  {
    name: "a FIFO as policy.ir.json",
    apply: async (dir) => {
      await rm(join(dir, "policy.ir.json"));
      mkfifo(join(dir, "policy.ir.json"));
    },
    reason: "`policy.ir.json` is not a regular file (a FIFO)",
  },
  {
    name: "a directory as signals.schema.json",
    apply: async (dir) => {
      await rm(join(dir, "signals.schema.json"));
      await mkdir(join(dir, "signals.schema.json"));
    },
    reason: "`signals.schema.json` is not a regular file (a directory)",
  },
  {
    name: "an unreadable file (a symlink loop)",
    apply: async (dir) => {
      await rm(join(dir, "policy.ir.json"));
      await symlink(join(dir, "policy.ir.json"), join(dir, "policy.ir.json"));
    },
    reason: "`policy.ir.json` cannot be read (ELOOP)",
  },
];

let policies: string;
let pristine: string;
let bundleDir: string;
let keys: string;
let sidecar: TestSidecar;

beforeAll(async () => {
  policies = await copyOfFixturePolicies();
  bundleDir = join(policies, TRANSFER.policyId, TRANSFER.policyVersion);
  pristine = `${policies}-pristine`;
  await cp(bundleDir, pristine, { recursive: true });
  // Absent at start, so the preflight does not load it: each breakage below meets the bundle's first load.
  await rm(bundleDir, { recursive: true });
  // A pinned bundle key (signatures not required), so that a bundle.sig present is checked against it.
  keys = await mkdtemp(join(tmpdir(), "writ-bundle-keys-"));
  await writeFile(join(keys, "bundle-key.pem"), generateSigningKeyPair().publicKeyPem);
  sidecar = await startTestSidecar(
    {
      SERVICE_POLICIES_ROOT: policies,
      SERVICE_BUNDLE_KEYS: join(keys, "bundle-key.pem"),
      SERVICE_REQUIRE_SIGNED_BUNDLES: "off",
      SERVICE_BUNDLE_LOAD_TIMEOUT_MS: String(LOAD_TIMEOUT_MS),
    },
    { surfaceB: true },
  );
});
afterAll(async () => {
  await sidecar?.close();
  for (const dir of [policies, pristine, keys]) if (dir) await rm(dir, { recursive: true, force: true });
});

/** One call of `route`, refused by a hang after 5 s (a route that waits on a bundle read fails the test at once). */
async function call(route: Route): Promise<{ status: number; body: unknown }> {
  const base = route.surface === "a" ? sidecar.url : sidecar.urls.b!;
  const body = route.body?.();
  const response = await fetch(`${base}${route.path}`, {
    method: route.method,
    headers: { authorization: `Bearer ${API_KEY}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(5_000),
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? null : (JSON.parse(text) as unknown) };
}

async function restore(): Promise<void> {
  await rm(bundleDir, { recursive: true, force: true });
  await cp(pristine, bundleDir, { recursive: true });
}

/** Every route, in parallel (they share one load), against what each answers to the breakage. */
async function everyRouteRefuses(reason: string): Promise<void> {
  const answers = await Promise.all(ROUTES.map(async (route) => [route.name, await call(route)] as const));
  expect(Object.fromEntries(answers)).toEqual(Object.fromEntries(ROUTES.map((route) => [route.name, route.broken(reason)])));
}

describe("a bundle that does not load, on every route that loads one", () => {
  for (const breakage of BREAKAGES) {
    it(breakage.name, async () => {
      await restore();
      await breakage.apply(bundleDir);
      await everyRouteRefuses(breakage.reason);
    });
  }

  it(`a load that does not finish within SERVICE_BUNDLE_LOAD_TIMEOUT_MS (${LOAD_TIMEOUT_MS} ms): refused, not kept`, async () => {
    await restore();
    // Every file-system call of this process (the sidecar's with it) waits, as behind a hung disk.
    const release = await holdThreadPool(policies);
    try {
      const started = Date.now();
      await everyRouteRefuses(`the bundle did not load within ${LOAD_TIMEOUT_MS} ms`);
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      await release();
    }
  });

  it("once the bundle is fixed on disk, every route serves it: no failed load was kept, no restart", async () => {
    await restore();
    const answers = await Promise.all(ROUTES.map(async (route) => [route.name, (await call(route)).status] as const));
    expect(Object.fromEntries(answers)).toEqual(Object.fromEntries(ROUTES.map((route) => [route.name, route.ok])));
  });
});
