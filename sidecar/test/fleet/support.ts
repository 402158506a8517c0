/**
 * A fleet for tests: BUILT sidecars (sidecar/dist/main.js) on one fresh PostgreSQL database, both surfaces on, all
 * signing with one key. Without PostgreSQL the files skip with one line locally and fail with CI=true
 * (test/support/postgres.ts).
 */
import { createPublicKey, generateKeyPairSync } from "node:crypto";
import { ExportVerifier, loadPublicKeyPem } from "@writ/runtime";
import { createServer } from "node:net";
import { expect } from "vitest";
import { logLines, startBuiltSidecar, type BuiltSidecar } from "../support/built-sidecar.js";
import { surfaceAEnv } from "../durability/load.js";
import { checkExport } from "../support/export-check.js";
import { fresh } from "./processes-support.js";

/** One Ed25519 key for the whole fleet (PKCS8 PEM), as a platform team distributes it. */
export const FLEET_SIGNING_KEY = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface FleetSidecar {
  readonly process: BuiltSidecar;
  /** `http://host:port` of Surface A and of Surface B. */
  readonly a: string;
  readonly b: string;
}

/** The environment of a fleet member on `databaseUrl`; `settings` add to it or override it. */
export async function fleetEnv(databaseUrl: string, settings: Readonly<Record<string, string>> = {}): Promise<Record<string, string>> {
  return surfaceAEnv({ SERVICE_STORE: "postgres", SERVICE_DATABASE_URL: databaseUrl, SERVICE_SIGNING_KEY: FLEET_SIGNING_KEY, ...settings });
}

/** Fleet members started so far in this file: every second one signs on a thread (docs/sidecar.md, "Signing threads"). */
let members = 0;

/** Starts one fleet member with both surfaces; the members alternate signing on the event loop and on one thread. */
export async function startFleetSidecar(databaseUrl: string, settings: Readonly<Record<string, string>> = {}): Promise<FleetSidecar> {
  const portB = await freePort();
  const signing = { SERVICE_SIGNING_THREADS: members++ % 2 === 0 ? "0" : "1" };
  const process = await startBuiltSidecar(await fleetEnv(databaseUrl, { SERVICE_B_PORT: String(portB), ...signing, ...settings }));
  return { process, a: process.url, b: `http://127.0.0.1:${portB}` };
}

export function databaseUrlOf(pool: { readonly options: unknown }): string {
  return (pool.options as { connectionString: string }).connectionString;
}

/** Starts a sidecar that must be refused: its exit code and its `failed to start` line. */
export async function refused(env: Record<string, string>): Promise<{ exit: string; line: Record<string, unknown> }> {
  const error = await startBuiltSidecar(env).then(
    () => {
      throw new Error("the sidecar started");
    },
    (e: unknown) => e as Error,
  );
  const [first, ...rest] = error.message.split("\n");
  const line = logLines(`${rest.join("\n")}\n`).find((l) => l.level === "fatal");
  expect(line, error.message).toBeDefined();
  return { exit: first!, line: line as Record<string, unknown> };
}

/**
 * The executionIds of the decisions in the record log `logId` as sidecar `url` exports it over a connection of its own
 * (of a sidecar of several processes, any may answer), once the export verified against the fleet's key (`what` names
 * the moment in the failure); null when the log holds nothing yet (404 `audit log not found`: its sidecar never
 * sequenced a record).
 */
export async function exportedDecisions(url: string, logId: string, what: string): Promise<ReadonlySet<string> | null> {
  const response = await fresh(url, "GET", `/audit/export?logId=${logId}`);
  if (response.status === 404) {
    expect(JSON.parse(response.text)).toMatchObject({ error: "audit log not found" });
    return null;
  }
  expect(response.status).toBe(200);
  const key = loadPublicKeyPem(createPublicKey(FLEET_SIGNING_KEY).export({ type: "spki", format: "pem" }).toString());
  const { report, decisions } = checkExport(response.text, new ExportVerifier([key]));
  expect(report.failures.slice(0, 5), `${what}: the log \`${logId}\` does not verify`).toEqual([]);
  return decisions;
}
