/**
 * A fleet on PostgreSQL (README.md, "A fleet"; docs/fleet.md, "Setup" and "Moving an LMDB sidecar's data over"): the
 * once-for-the-fleet block, then the every-host block run twice, as host-1 and host-2, on two free ports of this
 * machine, each with its own files under a directory standing for its root (/run/secrets, /var/lib/writ). Both must
 * decide; an attestation of host-1 must be confirmed by host-2 (the shared trust root); the executionId a stopped LMDB
 * sidecar decided before the import must be refused by the fleet.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { withClone, type Clone } from "../clone.js";
import { fleetDatabase, type FleetDatabase } from "../database.js";
import { approved, evaluateRequest, type Attestation } from "../evaluate.js";
import { request } from "../http.js";
import { sidecarPorts } from "../ports.js";
import type { BlockRef, Scenario, Substitution } from "../types.js";

const README_ONCE = { file: "README.md", opens: "createdb writ" };
const README_HOST = { file: "README.md", opens: "export SERVICE_STORE=postgres SERVICE_DATABASE_URL_FILE=/run/secrets/writ-db-url" };
const FLEET_ONCE = { file: "docs/fleet.md", opens: "createdb writ" };
const FLEET_HOST = { file: "docs/fleet.md", opens: "export SERVICE_STORE=postgres" };
const FLEET_IMPORT = {
  file: "docs/fleet.md",
  opens: "# 1. stop the LMDB sidecar (SIGTERM: it finishes requests in flight and flushes its data dir)",
};
const API_KEY = "docs-fleet-key-0123456789abcdef";

const ready = (port: number): string => `http://127.0.0.1:${port}/health?probe=ready`;

/** The directory standing for host `n`'s root, with the database URL file the docs name under /run/secrets. */
function hostRoot(clone: Clone, n: number, db: FleetDatabase): string {
  const root = clone.beside(`host-${n}`);
  mkdirSync(join(root, "run/secrets"), { recursive: true });
  writeFileSync(join(root, "run/secrets/writ-db-url"), `${db.url}\n`);
  chmodSync(join(root, "run/secrets/writ-db-url"), 0o600);
  return root;
}

/** The paths the docs give under / are the host's own: the directory standing for its root. */
function rooted(root: string): Substitution[] {
  return [
    { from: "/run/secrets/", to: join(root, "run/secrets/"), why: "the host's secrets: the test's database URL, written there first" },
    { from: "/var/lib/writ/", to: join(root, "var/lib/writ/"), why: "the host's data dirs, in the test's temporary directory" },
  ];
}

const createdb = (db: FleetDatabase): Substitution => ({
  from: "createdb writ",
  to: `createdb ${db.name}`,
  why: "a database of the test's own, dropped after it (PGHOST, PGPORT and PGUSER name the test's server)",
});

/**
 * Host 1 before the fleet: the policies compiled (what every host serves), and an LMDB sidecar that decided
 * examples/evaluate-request.json and was stopped, its data dir where the docs import it from.
 * @returns the executionId it decided
 */
async function lmdbSidecarDecided(clone: Clone, root: string): Promise<string> {
  const ports = await sidecarPorts();
  const lmdb = await clone.script(
    "an LMDB sidecar that decided examples/evaluate-request.json, on the compiled policies",
    `node compiler/dist/cli.js compile policies
SERVICE_API_KEY=${API_KEY} SERVICE_DATA_DIR=${join(root, "var/lib/writ/data")} node sidecar/dist/main.js
curl -fsS http://127.0.0.1:${ports.a}/evaluate -H "authorization: Bearer ${API_KEY}" -H 'content-type: application/json' -d @examples/evaluate-request.json
`,
    { env: ports.env, services: [{ command: "node sidecar/dist/main.js", ready: ready(ports.a) }] },
  );
  await lmdb.stop();
  return (JSON.parse(readFileSync(join(clone.dir, "examples/evaluate-request.json"), "utf8")) as { executionId: string }).executionId;
}

/** The every-host block as host-1 and host-2 at once, in `roots`. @returns the block's `file:line` and their Surface A URLs */
async function startHosts(clone: Clone, block: BlockRef, roots: readonly string[]): Promise<{ where: string; urls: string[] }> {
  const hosts = await Promise.all(
    roots.map(async (root, i) => {
      const n = i + 1;
      const ports = await sidecarPorts();
      const { where } = await clone.block(block, {
        substitutions: [
          { from: "SERVICE_API_KEY=…", to: `SERVICE_API_KEY=${API_KEY}`, why: "the placeholder: the test's key" },
          ...rooted(root),
          ...(n === 2 ? [{ from: "host-1", to: "host-2", why: "the second host, as the doc says: its own key and instance id" }] : []),
        ],
        env: ports.env,
        services: [{ command: "node sidecar/dist/main.js", ready: ready(ports.a) }],
      });
      return { where, url: `http://127.0.0.1:${ports.a}` };
    }),
  );
  return { where: hosts[0]!.where, urls: hosts.map((host) => host.url) };
}

/** What the docs promise of the fleet. */
async function fleetWorks(
  clone: Clone,
  { where: what, urls: [host1, host2] }: { where: string; urls: string[] },
  imported: string,
): Promise<void> {
  for (const [i, url] of [host1!, host2!].entries()) {
    const health = await request("GET", `${url}/health`, null);
    expect(health.body["instanceId"], `${what}: host-${i + 1}'s instance id (GET /health)`).toBe(`host-${i + 1}`);
  }
  const decided: Attestation = await approved(`${what}: host-1 decides`, host1!, API_KEY, evaluateRequest(clone.dir));
  await approved(`${what}: host-2 decides`, host2!, API_KEY, evaluateRequest(clone.dir));

  const schema = await request("GET", `${host2}/policies/payments.transfer/versions/1.2.0/schema`, API_KEY);
  const governs = schema.body["governs"] as { actionType: string; binding: string[] };
  const signals = evaluateRequest(clone.dir)["verifiedSignals"] as Record<string, unknown>;
  const executedAction = {
    actionType: governs.actionType,
    actionId: "docs-bank-tx-1",
    actionTimestamp: new Date().toISOString(),
    actionDetails: Object.fromEntries(governs.binding.map((name) => [name, signals[name]])),
  };
  const confirmed = await request("POST", `${host2}/confirm-execution`, API_KEY, { attestation: decided, executedAction });
  expect(
    { status: confirmed.status, matched: confirmed.body["matched"] },
    `${what}: host-2 confirms host-1's attestation: ${JSON.stringify(confirmed.body)}`,
  ).toEqual({
    status: 200,
    matched: true,
  });

  const replayed = await request("POST", `${host2}/evaluate`, API_KEY, evaluateRequest(clone.dir, { executionId: imported }));
  expect(
    { status: replayed.status, body: JSON.stringify(replayed.body) },
    `${what}: the executionId the LMDB sidecar decided, imported, is refused`,
  ).toEqual({
    status: 422,
    body: expect.stringContaining("INV-013"),
  });
}

/** `body` with a fresh database, dropped after whatever happens (its sidecars are stopped first, with the clone). */
async function withDatabase(body: (db: FleetDatabase) => Promise<void>): Promise<void> {
  const db = fleetDatabase();
  try {
    await body(db);
  } finally {
    await db.drop();
  }
}

export const readmeFleet: Scenario = {
  title: "README.md, A fleet: once for the fleet (migrate, import-lmdb, keys, trust root), then two hosts",
  blocks: [README_ONCE, README_HOST],
  postgres: true,
  run: () =>
    withDatabase((db) =>
      withClone(async (clone) => {
        const roots = [hostRoot(clone, 1, db), hostRoot(clone, 2, db)];
        const imported = await lmdbSidecarDecided(clone, roots[0]!);
        await clone.block(README_ONCE, { substitutions: [createdb(db), ...rooted(roots[0]!)], env: db.env });
        await fleetWorks(clone, await startHosts(clone, README_HOST, roots), imported);
      }),
    ),
};

export const docsFleet: Scenario = {
  title: "docs/fleet.md: setup once, the LMDB import, then two hosts",
  blocks: [FLEET_ONCE, FLEET_IMPORT, FLEET_HOST],
  postgres: true,
  run: () =>
    withDatabase((db) =>
      withClone(async (clone) => {
        const roots = [hostRoot(clone, 1, db), hostRoot(clone, 2, db)];
        const imported = await lmdbSidecarDecided(clone, roots[0]!);
        await clone.block(FLEET_ONCE, { substitutions: [createdb(db)], env: db.env });
        await clone.block(FLEET_IMPORT, { substitutions: rooted(roots[0]!) });
        await fleetWorks(clone, await startHosts(clone, FLEET_HOST, roots), imported);
      }),
    ),
};
