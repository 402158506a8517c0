/**
 * One-file bundle archives: an archive loads exactly as its directory does (one verification), packs to the same
 * bytes every time, and every way it can be wrong is refused with its code and a message saying what is wrong.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  BUNDLE_FILES,
  BundleError,
  MANIFEST_FILE,
  MAX_ARCHIVE_BYTES,
  PAYLOAD_TYPES,
  SIGNATURE_FILE,
  archiveFileName,
  buildManifest,
  canonicalJson,
  loadBundle,
  loadBundleArchive,
  packBundleArchive,
  readBundleArchive,
  readBundleDirectory,
  serializeJson,
  signObject,
  type BundleManifest,
  type BundleTrust,
  type SigningKey,
} from "../../src/index.js";
import { TRANSFER_IR, TRANSFER_SCHEMA, writeTransferBundle } from "../support/bundle.js";
import { TEST_SEED_1, TEST_SEED_2, keyFromSeed } from "../support/signer.js";

const ID = "payments.transfer";
const VERSION = "1.2.0";
const ORIGIN = archiveFileName(ID, VERSION);
const key = keyFromSeed(TEST_SEED_1);
const other = keyFromSeed(TEST_SEED_2);
const pinned: BundleTrust = { trustedKeys: [key.publicKey], requireSignature: true };
const utf8 = new TextEncoder();

let root: string;
let dir: string;
beforeEach(() => {
  root = writeTransferBundle();
  dir = join(root, ID, VERSION);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Writes `bundle.sig` by `by` over the directory's manifest, as `writ compile --sign-key` does. */
function sign(by: SigningKey): void {
  const manifest = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), "utf8")) as BundleManifest;
  writeFileSync(
    join(dir, SIGNATURE_FILE),
    serializeJson({ payloadType: PAYLOAD_TYPES.bundle, keyId: by.keyId, signature: signObject(PAYLOAD_TYPES.bundle, manifest, by) }),
  );
}

async function packed(): Promise<Uint8Array> {
  return packBundleArchive(await readBundleDirectory(dir));
}

/** The archive's JSON, changed by `change`, as bytes again (any JSON spelling: readers do not require JCS). */
async function changed(change: (archive: { [key: string]: unknown; files: Record<string, unknown> }) => void): Promise<Uint8Array> {
  const archive = JSON.parse(Buffer.from(await packed()).toString("utf8")) as { [key: string]: unknown; files: Record<string, unknown> };
  change(archive);
  return utf8.encode(JSON.stringify(archive));
}

async function refusal(
  bytes: Uint8Array,
  trust: BundleTrust = {},
  expectation?: Parameters<typeof loadBundleArchive>[3],
): Promise<BundleError> {
  const error = await loadBundleArchive(bytes, ORIGIN, trust, expectation).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BundleError);
  expect((error as BundleError).bundleDir).toBe(ORIGIN);
  expect((error as BundleError).message).not.toContain(root);
  return error as BundleError;
}

describe("an archive loads exactly as its directory does", () => {
  it.each([
    ["unsigned", null],
    ["signed", key],
  ] as const)("%s: the same manifest, IR, schema, signer and decisions; `dir` is the origin", async (_kind, by) => {
    if (by) sign(by);
    const trust: BundleTrust = by ? pinned : {};
    const fromDir = await loadBundle(root, ID, VERSION, trust);
    const fromArchive = await loadBundleArchive(await packed(), ORIGIN, trust, { policyId: ID, version: VERSION });
    expect(fromArchive.dir).toBe(ORIGIN);
    expect(fromArchive.manifest).toEqual(fromDir.manifest);
    expect(fromArchive.ir).toEqual(fromDir.ir);
    expect(fromArchive.schema).toEqual(fromDir.schema);
    expect(fromArchive.signedBy).toBe(fromDir.signedBy);
    expect(fromArchive.signedBy).toBe(by ? key.keyId : null);
    for (const signals of [
      { amount: 5, currency: "USD" },
      { amount: 20_000, currency: "EUR" },
      { amount: 5, currency: "USD", country: "KP" },
    ]) {
      expect(fromArchive.policy.evaluate(signals)).toEqual(fromDir.policy.evaluate(signals));
    }
  });

  it("holds every file of the bundle byte for byte, and the header names it", async () => {
    sign(key);
    const files = await readBundleDirectory(dir);
    const archive = readBundleArchive(packBundleArchive(files), ORIGIN);
    expect(archive.files).toEqual(files);
    expect([...archive.files.keys()].sort()).toEqual([...Object.values(BUNDLE_FILES), MANIFEST_FILE, SIGNATURE_FILE].sort());
    const manifest = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), "utf8")) as BundleManifest;
    expect(archive).toMatchObject({ policyId: ID, version: VERSION, bundleHash: manifest.bundle_hash });
  });

  it("accepts a source index entry as the expectation, and its bundle_hash must match", async () => {
    const { bundle_hash } = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), "utf8")) as BundleManifest;
    await expect(loadBundleArchive(await packed(), ORIGIN, {}, { policyId: ID, version: VERSION, bundle_hash })).resolves.toBeTruthy();
    expect(await refusal(await packed(), {}, { policyId: ID, version: VERSION, bundle_hash: "0".repeat(64) })).toMatchObject({
      code: "BUNDLE_TAMPERED",
      message: `archive has \`bundle_hash\` \`${bundle_hash}\`, expected \`${"0".repeat(64)}\``,
    });
  });
});

describe("the same bundle packs to the same bytes", () => {
  it("twice from the directory, and again from the archive's own files; the bytes are the JCS form", async () => {
    sign(key);
    const first = await packed();
    const second = await packed();
    expect(Buffer.from(second).equals(Buffer.from(first))).toBe(true);
    expect(Buffer.from(packBundleArchive(readBundleArchive(first, ORIGIN).files)).equals(Buffer.from(first))).toBe(true);
    const text = Buffer.from(first).toString("utf8");
    expect(canonicalJson(JSON.parse(text))).toBe(text);
    expect(text.startsWith('{"archiveVersion":1,"bundle_hash":"')).toBe(true);
  });

  it("for any file text (any Unicode, a byte order mark, every line ending), round trips exactly and deterministically", () => {
    const text = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 200 }),
      fc.string({ unit: "binary", maxLength: 200 }).map((s) => `\ufeff${s}\r\n`),
    );
    fc.assert(
      fc.property(text, text, (source, schemaNote) => {
        const files = new Map<string, Uint8Array>([
          [BUNDLE_FILES.source, utf8.encode(source)],
          [BUNDLE_FILES.schema, utf8.encode(serializeJson({ ...TRANSFER_SCHEMA, description: schemaNote }))],
          [BUNDLE_FILES.ir, utf8.encode(serializeJson(TRANSFER_IR))],
        ]);
        const manifest = buildManifest(
          { policyId: ID, version: VERSION, governs: "transfer.execute", compiler: { name: "test", version: "0" } },
          files,
        );
        files.set(MANIFEST_FILE, utf8.encode(serializeJson(manifest)));
        const bytes = packBundleArchive(files);
        const back = readBundleArchive(bytes, ORIGIN);
        expect(back.files).toEqual(files);
        expect(back.bundleHash).toBe(manifest.bundle_hash);
        expect(Buffer.from(packBundleArchive(back.files)).equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 100 },
    );
  });
});

describe("an archive that is wrong is refused, saying what is wrong", () => {
  it("a file's text changed", async () => {
    const bytes = await changed((a) => {
      a.files[BUNDLE_FILES.source] = `${String(a.files[BUNDLE_FILES.source])} `;
    });
    expect(await refusal(bytes)).toMatchObject({
      code: "BUNDLE_TAMPERED",
      message: "file `policy.writ` does not match its hash in the manifest",
    });
  });

  it("the header's bundle_hash changed", async () => {
    const manifest = JSON.parse(readFileSync(join(dir, MANIFEST_FILE), "utf8")) as BundleManifest;
    const bytes = await changed((a) => {
      a["bundle_hash"] = "f".repeat(64);
    });
    expect(await refusal(bytes)).toMatchObject({
      code: "BUNDLE_TAMPERED",
      message: `\`bundle_hash\` is \`${manifest.bundle_hash}\`, expected \`${"f".repeat(64)}\``,
    });
  });

  it("the manifest's bundle_hash changed", async () => {
    const bytes = await changed((a) => {
      const manifest = JSON.parse(String(a.files[MANIFEST_FILE])) as BundleManifest;
      a.files[MANIFEST_FILE] = serializeJson({ ...manifest, bundle_hash: "e".repeat(64) });
      a["bundle_hash"] = "e".repeat(64);
    });
    expect(await refusal(bytes)).toMatchObject({ code: "BUNDLE_TAMPERED", message: "`bundle_hash` does not match the manifest" });
  });

  it("a signature by a key that is not pinned", async () => {
    sign(other);
    expect(await refusal(await packed(), pinned)).toMatchObject({
      code: "BUNDLE_SIGNATURE_INVALID",
      message: "bundle signature does not verify against any trusted key",
    });
  });

  it("no signature when signatures are required", async () => {
    expect(await refusal(await packed(), pinned)).toMatchObject({
      code: "BUNDLE_UNSIGNED",
      message: "bundle is not signed and signatures are required",
    });
  });

  it("a file listed in the manifest left out", async () => {
    const bytes = await changed((a) => {
      delete a.files[BUNDLE_FILES.ir];
    });
    expect(await refusal(bytes)).toMatchObject({
      code: "BUNDLE_TAMPERED",
      message: "file `policy.ir.json` listed in the manifest is missing",
    });
  });

  it("another bundle than the one expected", async () => {
    expect(await refusal(await packed(), {}, { policyId: ID, version: "1.2.1" })).toMatchObject({
      code: "BUNDLE_INVALID",
      message: "archive holds `payments.transfer@1.2.0`, expected `payments.transfer@1.2.1`",
    });
  });

  it("a header naming another version than the manifest", async () => {
    const bytes = await changed((a) => {
      a["version"] = "1.2.1";
    });
    expect(await refusal(bytes)).toMatchObject({
      code: "BUNDLE_INVALID",
      message: "`bundle.manifest.json` names another policy or version than its archive",
    });
  });

  it.each<[string, (a: { [key: string]: unknown; files: Record<string, unknown> }) => void, string]>([
    ["an unknown member", (a) => (a["extra"] = 1), "archive has unknown member `extra`"],
    ["a member missing", (a) => delete a["bundle_hash"], "archive lacks `bundle_hash`"],
    ["another archiveVersion", (a) => (a["archiveVersion"] = 2), "archive has archiveVersion `2`; this runtime reads 1"],
    ["a policy id that is no path segment", (a) => (a["policyId"] = "../etc"), "archive names no valid policy id and version"],
    ["a version that is not strict semver", (a) => (a["version"] = "1.2"), "archive names no valid policy id and version"],
    ["a bundle_hash that is not hex", (a) => (a["bundle_hash"] = "ABC"), "archive has a `bundle_hash` that is not 64 lowercase hex digits"],
    ["files that are not an object", (a) => ((a as Record<string, unknown>)["files"] = []), "archive has `files` that is not an object"],
    ["an unknown file name", (a) => (a.files["policy.test.json"] = "{}"), "archive holds unknown file `policy.test.json`"],
    ["a path as a file name", (a) => (a.files["../policy.writ"] = ""), "archive holds unknown file `../policy.writ`"],
    ["a file that is not a string", (a) => (a.files[BUNDLE_FILES.source] = 7), "archive holds file `policy.writ` that is not a string"],
    ["no manifest", (a) => delete a.files[MANIFEST_FILE], "archive holds no `bundle.manifest.json`"],
  ])("%s", async (_name, change, message) => {
    const bytes = await changed(change);
    expect(await refusal(bytes)).toMatchObject({ code: "BUNDLE_INVALID", message });
    // The structural reader alone refuses it the same way.
    expect(() => readBundleArchive(bytes, ORIGIN)).toThrow(message);
  });

  it.each<[string, Uint8Array, string]>([
    ["not UTF-8", new Uint8Array([0x7b, 0xff, 0x7d]), "archive is not UTF-8 text"],
    ["not JSON", utf8.encode("archive"), "archive is not valid JSON: invalid literal `archive` at line 1 column 1"],
    ["a JSON array", utf8.encode("[]"), "archive is not a JSON object"],
    [
      "duplicate members",
      utf8.encode('{"archiveVersion":1,"archiveVersion":1}'),
      "archive is not valid JSON: duplicate key `archiveVersion` at line 1 column 21",
    ],
    [
      "nested deeper than an archive",
      utf8.encode('{"files":{"policy.writ":[]}}'),
      "archive is not valid JSON: nesting deeper than the maximum depth of 2 at line 1 column 25",
    ],
    [
      "a byte order mark",
      utf8.encode('\ufeff{"archiveVersion":1}'),
      "archive is not valid JSON: byte order mark is not allowed at line 1 column 1",
    ],
  ])("%s", async (_name, bytes, message) => {
    expect(await refusal(bytes)).toMatchObject({ code: "BUNDLE_INVALID", message });
  });

  it("larger than MAX_ARCHIVE_BYTES, before it is decoded", async () => {
    const bytes = new Uint8Array(MAX_ARCHIVE_BYTES + 1).fill(0xff);
    expect(await refusal(bytes)).toMatchObject({
      code: "BUNDLE_INVALID",
      message: `archive has ${MAX_ARCHIVE_BYTES + 1} bytes; an archive may have at most ${MAX_ARCHIVE_BYTES}`,
    });
  });
});

describe("packing refuses what cannot be an archive", () => {
  async function packRefusal(change: (files: Map<string, Uint8Array>) => void): Promise<BundleError> {
    const files = await readBundleDirectory(dir);
    change(files);
    const error = (() => {
      try {
        packBundleArchive(files);
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(BundleError);
    return error as BundleError;
  }

  it.each<[string, (files: Map<string, Uint8Array>) => void, string]>([
    ["a file that is not UTF-8", (f) => f.set(BUNDLE_FILES.source, new Uint8Array([0x23, 0xc3, 0x28])), "`policy.writ` is not UTF-8 text"],
    ["a file that is no bundle file", (f) => f.set("policy.test.json", utf8.encode("{}")), "`policy.test.json` is not a bundle file"],
    ["no manifest", (f) => f.delete(MANIFEST_FILE), "bundle has no `bundle.manifest.json`"],
    [
      "a file the manifest names left out",
      (f) => f.delete(BUNDLE_FILES.schema),
      "file `signals.schema.json` listed in the manifest is missing",
    ],
    [
      "a manifest that is not JSON",
      (f) => f.set(MANIFEST_FILE, utf8.encode("{")),
      "`bundle.manifest.json` is not valid JSON: unexpected end of input, expected a string key at line 1 column 2",
    ],
  ])("%s", async (_name, change, message) => {
    expect(await packRefusal(change)).toMatchObject({ code: "BUNDLE_INVALID", message });
  });

  it("an archive larger than MAX_ARCHIVE_BYTES", async () => {
    const source = utf8.encode("#".repeat(MAX_ARCHIVE_BYTES));
    const error = await packRefusal((files) => {
      files.set(BUNDLE_FILES.source, source);
    });
    expect(error.code).toBe("BUNDLE_INVALID");
    expect(error.message).toMatch(new RegExp(`^archive would have \\d+ bytes; an archive may have at most ${MAX_ARCHIVE_BYTES}$`));
  });
});
