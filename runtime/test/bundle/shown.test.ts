/**
 * What a bundle source sends reaches messages clipped (runtime/src/bundle/shown.ts): `shown` keeps a prefix and says
 * how long the text was, and a refusal of an index or an archive stays short wherever a long name or value sits,
 * before any signature is checked (no key needed to send one) or after.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BundleError,
  MAX_SHOWN_CHARACTERS,
  PAYLOAD_TYPES,
  canonicalJson,
  loadBundleArchive,
  readBundleArchive,
  readSourceIndex,
  shown,
  shownValue,
  signObject,
} from "../../src/index.js";
import { TEST_SEED_1, keyFromSeed } from "../support/signer.js";

const key = keyFromSeed(TEST_SEED_1);
const utf8 = new TextEncoder();
const NOW = new Date("2025-06-01T00:00:00Z");
/** A refusal holds at most a few names and its own words. */
const SHORT_MESSAGE = 4 * MAX_SHOWN_CHARACTERS + 200;

/** Long text of a source: of characters a pattern allows (so it passes checks a random string fails), or of any. */
const long = fc.oneof(
  fc.integer({ min: MAX_SHOWN_CHARACTERS + 1, max: 50_000 }).map((n) => "a".repeat(n)),
  fc.string({ unit: "binary", minLength: MAX_SHOWN_CHARACTERS + 1, maxLength: 5_000 }),
);

async function asyncRefusalOf(run: () => Promise<unknown>): Promise<BundleError> {
  const error = await run().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BundleError);
  return error as BundleError;
}

function refusalOf(run: () => unknown): BundleError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(BundleError);
    return e as BundleError;
  }
  throw new Error("expected a BundleError");
}

describe("shown", () => {
  it("keeps text of at most the limit whole, and otherwise a prefix, `…` and the length", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 600 }), fc.integer({ min: 2, max: 300 }), (text, max) => {
        const out = shown(text, max);
        if (text.length <= max) {
          expect(out).toBe(text);
          return;
        }
        const suffix = `… (${text.length} characters)`;
        expect(out.endsWith(suffix)).toBe(true);
        const prefix = out.slice(0, -suffix.length);
        expect(text.startsWith(prefix)).toBe(true);
        expect(prefix.length === max || prefix.length === max - 1).toBe(true);
        // Never half of a surrogate pair: a cut pair is left out whole.
        const last = prefix.charCodeAt(prefix.length - 1);
        if (prefix.length === max - 1) expect(text.charCodeAt(max - 1)).toBeGreaterThanOrEqual(0xd800);
        if (last >= 0xd800 && last <= 0xdbff)
          expect(text.charCodeAt(prefix.length)).not.toSatisfy((c: number) => c >= 0xdc00 && c <= 0xdfff);
      }),
    );
  });

  it("shows a 3 MB name as 200 characters and its length", () => {
    expect(shown("x".repeat(3 * 1024 * 1024))).toBe(`${"x".repeat(200)}… (3145728 characters)`);
  });

  it("shows values that are not strings as JSON, clipped alike", () => {
    expect(shownValue(7)).toBe("7");
    expect(shownValue({ a: 1 })).toBe('{"a":1}');
    expect(shownValue(undefined)).toBe("undefined");
    expect(shownValue(["y".repeat(1000)]).length).toBeLessThan(MAX_SHOWN_CHARACTERS + 30);
  });
});

/** The canonical bytes of an index envelope; `index` signed with `key` when `sign`. */
function envelope(index: Record<string, unknown>, extra: Record<string, unknown> = {}): Uint8Array {
  const signature = {
    payloadType: PAYLOAD_TYPES.bundleIndex,
    keyId: key.keyId,
    signature: signObject(PAYLOAD_TYPES.bundleIndex, index, key),
  };
  return utf8.encode(canonicalJson({ index, signature, ...extra }));
}

const INDEX = () => ({
  indexVersion: 1,
  serial: 3,
  issuedAt: "2025-05-31T12:00:00Z",
  bundles: [{ policyId: "payments.transfer", version: "1.2.0", bundle_hash: "a".repeat(64) }],
  aliases: [{ policyId: "payments.transfer", alias: "stable", version: "1.2.0" }],
});

type Place = (text: string) => Uint8Array;
/** Everywhere a source can put text in `index.json`: members the reader names in a refusal, and names of members. */
const INDEX_PLACES: [string, Place][] = [
  ["an envelope member's name", (t) => envelope(INDEX(), { [t]: 1 })],
  ["the payloadType", (t) => utf8.encode(canonicalJson({ index: INDEX(), signature: { payloadType: t, keyId: "k", signature: "s" } }))],
  ["an index member's name", (t) => envelope({ ...INDEX(), [t]: 1 })],
  ["indexVersion", (t) => envelope({ ...INDEX(), indexVersion: t })],
  ["serial", (t) => envelope({ ...INDEX(), serial: t })],
  ["issuedAt", (t) => envelope({ ...INDEX(), issuedAt: t })],
  ["expiresAt", (t) => envelope({ ...INDEX(), expiresAt: t })],
  ["an entry member's name", (t) => envelope({ ...INDEX(), bundles: [{ ...INDEX().bundles[0], [t]: 1 }] })],
  ["an entry's policy id", (t) => envelope({ ...INDEX(), bundles: [{ ...INDEX().bundles[0], policyId: t }], aliases: [] })],
  ["an entry's version", (t) => envelope({ ...INDEX(), bundles: [{ ...INDEX().bundles[0], version: t }], aliases: [] })],
  ["an entry's hash", (t) => envelope({ ...INDEX(), bundles: [{ ...INDEX().bundles[0], bundle_hash: t }] })],
  ["an alias's policy id", (t) => envelope({ ...INDEX(), aliases: [{ ...INDEX().aliases[0], policyId: t }] })],
  ["an alias's name", (t) => envelope({ ...INDEX(), aliases: [{ ...INDEX().aliases[0], alias: t }] })],
  ["an alias's version", (t) => envelope({ ...INDEX(), aliases: [{ ...INDEX().aliases[0], version: t }] })],
];

describe("a refusal of index.json stays short wherever a source puts long text", () => {
  it.each(INDEX_PLACES)("%s", (_place, place) => {
    fc.assert(
      fc.property(long, (text) => {
        const error = refusalOf(() => readSourceIndex(place(text), [key.publicKey], { now: NOW, origin: "index.json" }));
        expect(error.message.length).toBeLessThanOrEqual(SHORT_MESSAGE);
      }),
      { numRuns: 15 },
    );
  });

  it("a 3 MB member name, sent without any key: refused before the signature, shown as 200 characters and its length", () => {
    const name = "m".repeat(3 * 1024 * 1024);
    const bytes = utf8.encode(canonicalJson({ index: {}, signature: {}, [name]: 1 }));
    const error = refusalOf(() => readSourceIndex(bytes, [key.publicKey], { now: NOW, origin: "index.json" }));
    expect(error).toMatchObject({
      code: "INDEX_INVALID",
      message: `index: index file has unknown member \`${"m".repeat(200)}… (3145728 characters)\``,
    });
  });
});

/** A manifest that passes every check before its own `files` and hashes. */
const MANIFEST = {
  manifestVersion: 1,
  policyId: "payments.transfer",
  version: "1.2.0",
  bundle_hash: "a".repeat(64),
  files: { "policy.writ": "b".repeat(64), "signals.schema.json": "b".repeat(64), "policy.ir.json": "b".repeat(64) },
};

/** An archive's JSON with `change` made: the reader refuses it before any hash or signature. */
function archive(change: (a: Record<string, unknown> & { files: Record<string, unknown> }) => void): Uint8Array {
  const a = {
    archiveVersion: 1,
    policyId: "payments.transfer",
    version: "1.2.0",
    bundle_hash: "a".repeat(64),
    files: { "bundle.manifest.json": "{}" } as Record<string, unknown>,
  };
  change(a);
  return utf8.encode(JSON.stringify(a));
}

const ARCHIVE_PLACES: [string, Place][] = [
  ["a file name", (t) => archive((a) => (a.files[t] = ""))],
  ["a member's name", (t) => archive((a) => (a[t] = 1))],
  ["archiveVersion", (t) => archive((a) => (a["archiveVersion"] = t))],
  ["the policy id", (t) => archive((a) => (a["policyId"] = t))],
  ["the version", (t) => archive((a) => (a["version"] = t))],
  ["the hash", (t) => archive((a) => (a["bundle_hash"] = t))],
  // The manifest is read before any hash is checked.
  [
    "the manifest's manifestVersion",
    (t) => archive((a) => (a.files["bundle.manifest.json"] = JSON.stringify({ ...MANIFEST, manifestVersion: t }))),
  ],
  [
    "a file name in the manifest",
    (t) =>
      archive(
        (a) => (a.files["bundle.manifest.json"] = JSON.stringify({ ...MANIFEST, files: { ...MANIFEST.files, [t]: "b".repeat(64) } })),
      ),
  ],
];

describe("a refusal of an archive stays short wherever a source puts long text", () => {
  it.each(ARCHIVE_PLACES)("%s", async (_place, place) => {
    await fc.assert(
      fc.asyncProperty(long, async (text) => {
        const error = await asyncRefusalOf(() =>
          loadBundleArchive(place(text), "a.bundle.json", {}, { policyId: "payments.transfer", version: "1.2.0" }),
        );
        expect(error.message.length).toBeLessThanOrEqual(SHORT_MESSAGE);
      }),
      { numRuns: 15 },
    );
  });

  it("a 15 MB file name: shown as 200 characters and its length", () => {
    const name = "f".repeat(15 * 1024 * 1024);
    const error = refusalOf(() =>
      readBundleArchive(
        archive((a) => (a.files[name] = "")),
        "a.bundle.json",
      ),
    );
    expect(error).toMatchObject({
      code: "BUNDLE_INVALID",
      message: `archive holds unknown file \`${"f".repeat(200)}… (15728640 characters)\``,
    });
  });
});
