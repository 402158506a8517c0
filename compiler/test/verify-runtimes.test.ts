/**
 * `writ verify` and runtime upgrades (docs/attestations.md, "Runtime upgrades"), on the published conformance vectors:
 * an earlier release deciding the same way verifies with the key alone; a runtime whose semantics changed verifies only
 * when the trust root document or `--accept-runtime` accepts it; malformed runtime hashes are bad arguments.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../src/cli/main.js";

interface Vector {
  readonly id: string;
  readonly publicKey: string;
  readonly json: string;
}

const vectors = (
  JSON.parse(readFileSync(new URL("../../conformance/vectors/attestations.json", import.meta.url), "utf8")) as { vectors: Vector[] }
).vectors;
const vector = (id: string): Vector => {
  const v = vectors.find((x) => x.id === id);
  if (v === undefined) throw new Error(`no vector ${id}`);
  return v;
};
const earlier = vector("attestation-v1-earlier-release");
const other = vector("attestation-v1-other-semantics");
const otherHash = String((JSON.parse(other.json) as Record<string, unknown>)["runtimeHash"]);

let cwd: string;
let out: string[];
let err: string[];
beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), "writ-verify-runtimes-"));
  out = [];
  err = [];
  writeFileSync(join(cwd, "k.pub"), earlier.publicKey);
  writeFileSync(join(cwd, "earlier.json"), earlier.json);
  writeFileSync(join(cwd, "other.json"), other.json);
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

const run = (...argv: string[]): Promise<number> => main(argv, { cwd, out: (l) => out.push(l), err: (l) => err.push(l) });
const trustRoot = (acceptedRuntimeHashes?: unknown): string => {
  writeFileSync(join(cwd, "root.json"), JSON.stringify({ trustRootVersion: "2026-11", keys: [earlier.publicKey], acceptedRuntimeHashes }));
  return "root.json";
};

describe("writ verify across runtime releases", () => {
  it("verifies an earlier release's attestation with the key alone, and refuses another semantics'", async () => {
    expect(await run("verify", "earlier.json", "--key", "k.pub")).toBe(0);
    expect(out.join("\n")).toContain("attestation: valid (signature verified, runtime verified, schema verified)");
    out.length = 0;
    expect(await run("verify", "other.json", "--key", "k.pub")).toBe(5);
    expect(out.join("\n")).toContain("attestation: NOT valid (signature verified, runtime unknown, schema verified)");
    expect(out.join("\n")).toContain(`error: runtime \`1.0.0\` (\`${otherHash}\`) is not an accepted runtime`);
  });

  it("accepts another semantics listed in the trust root, besides its own", async () => {
    const root = trustRoot([otherHash]);
    expect(await run("verify", "other.json", "--trust-root", root)).toBe(0);
    expect(await run("verify", "earlier.json", "--trust-root", root)).toBe(0);
  });

  it("--accept-runtime names exactly the runtimes accepted, over the trust root's", async () => {
    expect(await run("verify", "other.json", "--key", "k.pub", "--accept-runtime", otherHash)).toBe(0);
    expect(await run("verify", "earlier.json", "--key", "k.pub", "--accept-runtime", otherHash)).toBe(5);
    const ownHash = String((JSON.parse(earlier.json) as Record<string, unknown>)["runtimeHash"]);
    expect(await run("verify", "other.json", "--trust-root", trustRoot([otherHash]), "--accept-runtime", ownHash)).toBe(5);
  });

  it("refuses a malformed runtime hash as a bad invocation: exit 2", async () => {
    expect(await run("verify", "other.json", "--key", "k.pub", "--accept-runtime", otherHash.toUpperCase())).toBe(2);
    expect(err[0]).toContain(`--accept-runtime \`${otherHash.toUpperCase()}\` is not a runtimeHash (64 lowercase hex digits)`);
    expect(await run("verify", "other.json", "--trust-root", trustRoot(["0.1.0"]))).toBe(2);
    expect(err[1]).toContain(
      "unusable trust root `root.json`: accepted runtime hash `0.1.0` is not a runtimeHash (64 lowercase hex digits)",
    );
  });
});
