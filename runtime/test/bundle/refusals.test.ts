/**
 * The authorizer's answer to a policy bundle that does not load, per use (BUNDLE_REFUSALS, docs/errors.md): variant 1
 * evaluate is EVALUATION_FAILED (500), the uses that take `signals` and the schema are POLICY_BUNDLE_INVALID (422),
 * whatever the loader's reason, an unreadable file included (before, a raw fs error, and a 500 `internal error`).
 */
import { rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  AuthorizationError,
  Authorizer,
  MemoryReplayStore,
  PolicyRegistry,
  createSigner,
  createTrustRoot,
  statusOf,
} from "../../src/index.js";
import { writeTransferBundle } from "../support/bundle.js";
import { TEST_SEED_1, keyFromSeed } from "../support/signer.js";
import { mkfifo } from "./stuck-reads.js";

const key = keyFromSeed(TEST_SEED_1);
const signer = createSigner(key, createTrustRoot("tr-1", [key.publicKey]));
const ID = "payments.transfer";
const VERSION = "1.2.0";
const SIGNALS = { amount: 1, currency: "USD" };

let root: string;
let authorizer: Authorizer;
beforeEach(() => {
  root = writeTransferBundle();
  authorizer = new Authorizer({ registry: new PolicyRegistry(root), signer, store: new MemoryReplayStore() });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

async function codeOf(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(AuthorizationError);
  return (e as AuthorizationError).code;
}

async function codes(): Promise<Record<string, string>> {
  const request = (executionId: string) => ({ executionId, policyId: ID, policyVersion: VERSION, signals: SIGNALS });
  return {
    evaluate: await codeOf(authorizer.evaluate(request("e-1"))),
    execute: await codeOf(authorizer.execute(request("e-2"))),
    dryRun: await codeOf(authorizer.dryRun(ID, VERSION, SIGNALS)),
    simulate: await codeOf(authorizer.simulate(ID, VERSION, SIGNALS)),
    schema: await codeOf(authorizer.policy(ID, VERSION, "schema")),
  };
}

const EXPECTED = {
  evaluate: "EVALUATION_FAILED",
  execute: "POLICY_BUNDLE_INVALID",
  dryRun: "POLICY_BUNDLE_INVALID",
  simulate: "POLICY_BUNDLE_INVALID",
  schema: "POLICY_BUNDLE_INVALID",
};

describe("a bundle that does not load", () => {
  it.each<[string, (dir: string) => void]>([
    ["a manifest that is not JSON", (dir) => writeFileSync(join(dir, "bundle.manifest.json"), "{")],
    ["a FIFO as bundle.sig", (dir) => mkfifo(join(dir, "bundle.sig"))],
    [
      "an unreadable file (a symlink loop)",
      (dir) => {
        rmSync(join(dir, "policy.ir.json"));
        symlinkSync(join(dir, "policy.ir.json"), join(dir, "policy.ir.json"));
      },
    ],
  ])("%s: the code each use's spec statuses allow", async (_name, breakIt) => {
    breakIt(join(root, ID, VERSION));
    expect(await codes()).toEqual(EXPECTED);
    expect(statusOf("POLICY_BUNDLE_INVALID")).toBe(422);
  });

  it("the message says why, for the log", async () => {
    mkfifo(join(root, ID, VERSION, "bundle.sig"));
    const e = await authorizer.dryRun(ID, VERSION, SIGNALS).catch((err: unknown) => err);
    expect((e as Error).message).toBe(`bundle ${ID}@${VERSION} does not load: \`bundle.sig\` is not a regular file (a FIFO)`);
  });

  it("a missing bundle keeps its own codes: 404 for evaluate and the schema, 422 for the uses that take signals", async () => {
    rmSync(join(root, ID), { recursive: true });
    expect(await codes()).toEqual({
      evaluate: "POLICY_NOT_FOUND",
      execute: "POLICY_BUNDLE_MISSING",
      dryRun: "POLICY_BUNDLE_MISSING",
      simulate: "POLICY_BUNDLE_MISSING",
      schema: "POLICY_NOT_FOUND",
    });
  });
});
