/**
 * Bundles for the sidecar's tests, compiled from DSL sources as an operator would: the conformance fixtures
 * (conformance/fixtures/policies) and the shipped `payments.transfer`. Written once per process into a
 * temporary policies root.
 */
import { rmSync } from "node:fs";
import { mkdir, mkdtemp, readFile, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile } from "@writ/compiler";

const REPO = new URL("../../../", import.meta.url).pathname;
const SOURCES = [join(REPO, "conformance/fixtures/policies"), join(REPO, "policies")];

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === "policy.writ") out.push(join(entry.parentPath, entry.name));
  }
  return out.sort();
}

let compiled: Promise<string> | null = null;

/** A policies root holding every fixture bundle (unsigned). */
export function fixturePoliciesRoot(): Promise<string> {
  compiled ??= (async () => {
    const root = await mkdtemp(join(tmpdir(), "writ-sidecar-policies-"));
    // Shared by every test file of this process (sidecars read it until the end): removed when the process exits.
    process.once("exit", () => rmSync(root, { recursive: true, force: true }));
    for (const source of (await Promise.all(SOURCES.map(sources))).flat()) {
      const result = compile(source, await readFile(source, "utf8"));
      if (!result.valid || !result.bundle) throw new Error(`${source} does not compile: ${result.errors.map((e) => e.message).join("; ")}`);
      const dir = join(root, result.bundle.policyId, result.bundle.version);
      await mkdir(dir, { recursive: true });
      for (const [name, bytes] of result.bundle.files) await writeFile(join(dir, name), bytes);
    }
    return root;
  })();
  return compiled;
}

/** Valid signals of `conformance.transfer` for each outcome (1.0.0: escalation above 10000). */
export const TRANSFER_SIGNALS = {
  approved: { amount: 250, currency: "USD", kyc_verified: true, risk_score: 10 },
  pending: { amount: 20_000, currency: "EUR", kyc_verified: true, risk_score: 10 },
  rejected: { amount: 250, currency: "GBP", kyc_verified: true, risk_score: 95 },
} as const;
