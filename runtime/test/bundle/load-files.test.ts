/**
 * loadBundle reads only regular files, without ever blocking: a FIFO, a device, a directory, an unreadable path or an
 * oversized file in a bundle is a BundleError naming the file (never a server directory), at once. Before, a FIFO in
 * place of a bundle file hung the load forever, and an unreadable file escaped as a raw fs error (a 500).
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BundleError, loadBundle } from "../../src/index.js";
import { MAX_BUNDLE_FILE_BYTES } from "../../src/bundle/read-file.js";
import { writeTransferBundle } from "../support/bundle.js";
import { mkfifo, within } from "./stuck-reads.js";

let root: string;
let dir: string;

beforeEach(() => {
  root = writeTransferBundle();
  dir = join(root, "payments.transfer", "1.2.0");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** The refusal of loading the transfer bundle, within 2 s. */
async function refusal(): Promise<BundleError> {
  const error = await within(
    2_000,
    "loadBundle",
    loadBundle(root, "payments.transfer", "1.2.0").then(
      () => null,
      (e: unknown) => e,
    ),
  );
  expect(error).toBeInstanceOf(BundleError);
  const bundleError = error as BundleError;
  // Refusals of a bundle that is there reach clients (Surface B's validate): no server directory in them.
  if (bundleError.code !== "BUNDLE_NOT_FOUND") expect(bundleError.message).not.toContain(root);
  return bundleError;
}

/** Puts `make(path)` in place of the bundle's file `name`. */
function replace(name: string, make: (path: string) => void): void {
  rmSync(join(dir, name), { recursive: true, force: true });
  make(join(dir, name));
}

describe("a bundle file that is not a regular file is refused at once, naming it", () => {
  it.each(["bundle.sig", "policy.ir.json", "signals.schema.json", "bundle.manifest.json"])("a FIFO as `%s`", async (name) => {
    replace(name, mkfifo);
    expect(await refusal()).toMatchObject({ code: "BUNDLE_INVALID", message: `\`${name}\` is not a regular file (a FIFO)` });
  });

  it("a directory", async () => {
    replace("signals.schema.json", (path) => mkdirSync(path));
    expect(await refusal()).toMatchObject({ code: "BUNDLE_INVALID", message: "`signals.schema.json` is not a regular file (a directory)" });
  });

  it("a device, through a symlink", async () => {
    replace("policy.ir.json", (path) => symlinkSync("/dev/zero", path));
    expect(await refusal()).toMatchObject({ code: "BUNDLE_INVALID", message: "`policy.ir.json` is not a regular file (a device)" });
  });
});

describe("a bundle file that cannot be read is a BundleError, not a raw fs error", () => {
  it("a symlink loop (ELOOP)", async () => {
    replace("policy.ir.json", (path) => symlinkSync(path, path));
    expect(await refusal()).toMatchObject({ code: "BUNDLE_INVALID", message: "`policy.ir.json` cannot be read (ELOOP)" });
  });

  it(`a file of more than ${MAX_BUNDLE_FILE_BYTES} bytes is refused before it is read`, async () => {
    // Sparse: the size is there, the disk blocks are not.
    truncateSync(join(dir, "policy.writ"), MAX_BUNDLE_FILE_BYTES + 1);
    expect(await refusal()).toMatchObject({
      code: "BUNDLE_INVALID",
      message: `\`policy.writ\` has ${MAX_BUNDLE_FILE_BYTES + 1} bytes; a bundle file may have at most ${MAX_BUNDLE_FILE_BYTES}`,
    });
  });

  it("a bundle directory that is a file is no bundle (ENOTDIR is not found, as a missing directory is)", async () => {
    rmSync(dir, { recursive: true });
    writeFileSync(dir, "");
    expect((await refusal()).code).toBe("BUNDLE_NOT_FOUND");
  });
});

describe("what still loads", () => {
  it("bundle files that are symlinks to regular files (a deployment by symlink)", async () => {
    const elsewhere = join(root, "elsewhere.ir.json");
    renameSync(join(dir, "policy.ir.json"), elsewhere);
    symlinkSync(elsewhere, join(dir, "policy.ir.json"));
    const loaded = await loadBundle(root, "payments.transfer", "1.2.0");
    expect(loaded.ir.policyId).toBe("payments.transfer");
  });

  it("an empty bundle file is read as empty (and then refused by its hash, as before)", async () => {
    truncateSync(join(dir, "policy.writ"), 0);
    expect(await refusal()).toMatchObject({
      code: "BUNDLE_TAMPERED",
      message: "file `policy.writ` does not match its hash in the manifest",
    });
  });
});
