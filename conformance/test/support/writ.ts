/**
 * writ as the suite's tests run it: the fixture policies compiled and signed by the BUILT `writ` CLI (as an operator
 * would, README "For policy authors"), and the BUILT sidecar started fresh on random ports with a fresh data dir,
 * a signing key made by `writ keygen` (so its public key is a file, as `--public-key` takes it) and the bundle key
 * pinned. Test support only: the suite itself never imports writ.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { listeningUrl, startBuiltSidecar, type BuiltSidecar } from "../../../sidecar/test/support/built-sidecar.js";

const run = promisify(execFile);

export const REPO = fileURLToPath(new URL("../../../", import.meta.url));
export const WRIT_CLI = join(REPO, "compiler/dist/cli.js");
export const CONFORMANCE_CLI = join(REPO, "conformance/dist/cli.js");
export const FIXTURE_POLICIES = join(REPO, "conformance/fixtures/policies");
export const API_KEY = "conformance-api-key-0123456789abcdef";

/** @throws Error naming the missing build output and the command that makes it. */
export function assertBuilt(): void {
  for (const file of [WRIT_CLI, CONFORMANCE_CLI]) {
    if (!existsSync(file))
      throw new Error(`${file} is missing: these tests run the built CLIs; run \`npm run build\` at the repository root first`);
  }
}

export interface Fixtures {
  readonly dir: string;
  readonly policiesRoot: string;
  /** `writ keygen` output: the sidecar's signing key (mode 0600) and its public half for `--public-key`. */
  readonly signingKey: string;
  readonly publicKey: string;
  readonly bundleKeyPub: string;
  remove(): Promise<void>;
}

/** `writ keygen` twice (bundle key, signing key), then `writ compile conformance/fixtures/policies --sign-key`. */
export async function compileFixtures(): Promise<Fixtures> {
  assertBuilt();
  const dir = await mkdtemp(join(tmpdir(), "writ-conformance-"));
  try {
    await run(process.execPath, [WRIT_CLI, "keygen", "--out", join(dir, "bundle")]);
    await run(process.execPath, [WRIT_CLI, "keygen", "--out", join(dir, "signing")]);
    await run(process.execPath, [
      WRIT_CLI,
      "compile",
      FIXTURE_POLICIES,
      "--out",
      join(dir, "policies"),
      "--sign-key",
      join(dir, "bundle.key"),
    ]);
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    dir,
    policiesRoot: join(dir, "policies"),
    signingKey: join(dir, "signing.key"),
    publicKey: join(dir, "signing.pub"),
    bundleKeyPub: join(dir, "bundle.pub"),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

export interface Writ {
  readonly sidecar: BuiltSidecar;
  readonly surfaceA: string;
  readonly surfaceB: string;
  stop(): Promise<void>;
}

/** A fresh built sidecar serving the fixtures: its own data dir, both surfaces on random ports. */
/** `settings` add to the sidecar's environment or override it (e.g. `SERVICE_STORE=postgres`). */
export async function startWrit(fixtures: Fixtures, settings: Readonly<Record<string, string>> = {}): Promise<Writ> {
  const dataDir = await mkdtemp(join(fixtures.dir, "data-"));
  const sidecar = await startBuiltSidecar({
    SERVICE_API_KEY: API_KEY,
    SERVICE_POLICIES_ROOT: fixtures.policiesRoot,
    SERVICE_SIGNING_KEY_FILE: fixtures.signingKey,
    SERVICE_BUNDLE_KEYS: fixtures.bundleKeyPub,
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PORT: "0",
    SERVICE_B_PORT: "0",
    SERVICE_LOG_LEVEL: "warn",
    ...settings,
  });
  // Surface B's line follows Surface A's in the same write burst; wait for it briefly if it is not there yet.
  let b = listeningUrl(sidecar.output(), "B");
  for (let i = 0; b === null && i < 50; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    b = listeningUrl(sidecar.output(), "B");
  }
  if (b === null) {
    await sidecar.kill();
    throw new Error(`Surface B did not listen:\n${sidecar.output()}`);
  }
  return {
    sidecar,
    surfaceA: sidecar.url,
    surfaceB: b,
    stop: async () => {
      await sidecar.kill();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
