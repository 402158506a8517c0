/**
 * A bundle source's signed index: what `signSourceIndex` writes `readSourceIndex` trusts, and nothing else: not a
 * changed byte, not another key, not another signing domain, not an expired index, not an index that is invalid
 * (checked both when signing and when reading a hand-signed one).
 */
import { describe, expect, it } from "vitest";
import {
  BundleError,
  INDEX_FILE,
  MAX_BUNDLE_REF_LENGTH,
  MAX_INDEX_BYTES,
  MAX_SERIAL,
  PAYLOAD_TYPES,
  canonicalJson,
  readSourceIndex,
  signObject,
  signSourceIndex,
  type PayloadType,
  type PublicKey,
  type SourceIndex,
} from "../../src/index.js";
import { TEST_SEED_1, TEST_SEED_2, keyFromSeed } from "../support/signer.js";

const key = keyFromSeed(TEST_SEED_1);
const other = keyFromSeed(TEST_SEED_2);
const HASH_A = "a".repeat(64);
const HASH_B = "b".repeat(64);
const NOW = new Date("2025-06-01T00:00:00Z");
const ORIGIN = "https://bundles.example/index.json";
const utf8 = new TextEncoder();

const INDEX: SourceIndex = {
  indexVersion: 1,
  serial: 42,
  issuedAt: "2025-05-31T12:00:00Z",
  expiresAt: "2025-06-30T12:00:00Z",
  bundles: [
    { policyId: "payments.transfer", version: "1.2.0", bundle_hash: HASH_A },
    { policyId: "payments.transfer", version: "1.3.0-rc.1", bundle_hash: HASH_B },
    { policyId: "deploy.production", version: "1.0.0", bundle_hash: HASH_B },
  ],
  aliases: [
    { policyId: "payments.transfer", alias: "stable", version: "1.2.0" },
    { policyId: "payments.transfer", alias: "canary", version: "1.3.0-rc.1" },
    { policyId: "deploy.production", alias: "stable", version: "1.0.0" },
  ],
};

function read(bytes: Uint8Array, keys: readonly PublicKey[] = [key.publicKey], now = NOW) {
  return readSourceIndex(bytes, keys, { now, origin: ORIGIN });
}

function refusal(run: () => unknown): BundleError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(BundleError);
    return e as BundleError;
  }
  throw new Error("expected a BundleError");
}

/** index.json over `index` as given (no checks), signed in `domain`, its envelope claiming `payloadType`. */
function handSigned(
  index: object,
  payloadType: string = PAYLOAD_TYPES.bundleIndex,
  domain: PayloadType = PAYLOAD_TYPES.bundleIndex,
): Uint8Array {
  return utf8.encode(canonicalJson({ index, signature: { payloadType, keyId: key.keyId, signature: signObject(domain, index, key) } }));
}

describe("signSourceIndex and readSourceIndex", () => {
  it("round trip: the index, and the key that signed it", () => {
    expect(read(signSourceIndex(INDEX, key))).toEqual({ index: INDEX, signedBy: key.keyId });
  });

  it("writes the JCS form of {index, signature}, the same bytes every time", () => {
    const bytes = signSourceIndex(INDEX, key);
    expect(Buffer.from(signSourceIndex(INDEX, key)).equals(Buffer.from(bytes))).toBe(true);
    const text = Buffer.from(bytes).toString("utf8");
    expect(canonicalJson(JSON.parse(text))).toBe(text);
    const parsed = JSON.parse(text) as { index: unknown; signature: Record<string, string> };
    expect(parsed.signature).toMatchObject({ payloadType: "application/vnd.writ.bundle-index.v1+json", keyId: key.keyId });
    expect(parsed.index).toEqual(INDEX);
  });

  it("an index without expiresAt never expires; one with it is refused from then on", () => {
    const { expiresAt: _none, ...forever } = INDEX;
    expect(read(signSourceIndex(forever, key), [key.publicKey], new Date("2999-01-01T00:00:00Z")).index).toEqual(forever);
    const signed = signSourceIndex(INDEX, key);
    for (const now of [new Date("2025-06-30T12:00:00.000Z"), new Date("2026-01-01T00:00:00Z")]) {
      expect(refusal(() => read(signed, [key.publicKey], now))).toMatchObject({
        code: "INDEX_EXPIRED",
        message: "index expired at `2025-06-30T12:00:00Z` (serial 42)",
        bundleDir: ORIGIN,
      });
    }
    expect(read(signed, [key.publicKey], new Date("2025-06-30T11:59:59.999Z")).index).toEqual(INDEX);
  });

  it("the highest serial (MAX_SERIAL) and the longest `policyId@version` (MAX_BUNDLE_REF_LENGTH) are read", () => {
    const policyId = "p".repeat(MAX_BUNDLE_REF_LENGTH - "@1.2.0".length);
    const index: SourceIndex = {
      ...INDEX,
      serial: MAX_SERIAL,
      bundles: [{ policyId, version: "1.2.0", bundle_hash: HASH_A }],
      aliases: [],
    };
    expect(read(signSourceIndex(index, key)).index).toEqual(index);
    // 2^32 − 1 safe integers remain above it.
    expect(Number.MAX_SAFE_INTEGER - MAX_SERIAL).toBe(2 ** 32 - 1);
  });

  it("the signer is any one of the pinned keys", () => {
    expect(read(signSourceIndex(INDEX, other), [key.publicKey, other.publicKey]).signedBy).toBe(other.keyId);
  });
});

describe("an index whose signature does not hold is refused (INDEX_SIGNATURE_INVALID)", () => {
  it("a changed byte", () => {
    const text = Buffer.from(signSourceIndex(INDEX, key)).toString("utf8").replace('"serial":42', '"serial":43');
    expect(refusal(() => read(utf8.encode(text)))).toMatchObject({
      code: "INDEX_SIGNATURE_INVALID",
      message: "index signature does not verify against any trusted key",
    });
  });

  it("a key that is not pinned", () => {
    expect(refusal(() => read(signSourceIndex(INDEX, other)))).toMatchObject({
      code: "INDEX_SIGNATURE_INVALID",
      message: "index signature does not verify against any trusted key",
    });
  });

  it("no pinned key at all", () => {
    expect(refusal(() => read(signSourceIndex(INDEX, key), []))).toMatchObject({
      code: "INDEX_SIGNATURE_INVALID",
      message: "index cannot be verified: no trusted bundle key is configured",
    });
  });

  it("a signature made in the bundle domain, presented as an index signature", () => {
    expect(refusal(() => read(handSigned(INDEX, PAYLOAD_TYPES.bundleIndex, PAYLOAD_TYPES.bundle)))).toMatchObject({
      code: "INDEX_SIGNATURE_INVALID",
      message: "index signature does not verify against any trusted key",
    });
  });

  it("an envelope that says it is signed in another domain", () => {
    expect(refusal(() => read(handSigned(INDEX, PAYLOAD_TYPES.bundle, PAYLOAD_TYPES.bundle)))).toMatchObject({
      code: "INDEX_SIGNATURE_INVALID",
      message:
        "index is signed as `application/vnd.writ.bundle.v1+json`, not as a bundle index (`application/vnd.writ.bundle-index.v1+json`)",
    });
  });

  it("a malformed signature", () => {
    const text = Buffer.from(signSourceIndex(INDEX, key))
      .toString("utf8")
      .replace(/"signature":"[^"]+"/, '"signature":"AAAA"');
    expect(refusal(() => read(utf8.encode(text)))).toMatchObject({ code: "INDEX_SIGNATURE_INVALID" });
  });
});

type Change = (index: Record<string, unknown> & { bundles: Record<string, unknown>[]; aliases: Record<string, unknown>[] }) => void;

/** What is wrong, the change that makes it so, the message; and the reader's message when its parser refuses first. */
const INVALID: [string, Change, string, unknown?][] = [
  ["a serial of 0", (i) => (i["serial"] = 0), "index has serial `0`; a serial is a positive safe integer"],
  ["a negative serial", (i) => (i["serial"] = -3), "index has serial `-3`; a serial is a positive safe integer"],
  ["a fractional serial", (i) => (i["serial"] = 1.5), "index has serial `1.5`; a serial is a positive safe integer"],
  [
    "a serial beyond safe integers",
    (i) => (i["serial"] = 2 ** 53),
    "index has serial `9007199254740992`; a serial is a positive safe integer",
    expect.stringMatching(
      /^index is not valid JSON: unsafe number `9007199254740992` exceeds the safe magnitude 2\^53 - 1 at line 1 column \d+$/,
    ),
  ],
  ["a serial that is a string", (i) => (i["serial"] = "7"), "index has serial `7`; a serial is a positive safe integer"],
  [
    "the highest safe integer as serial (no index could follow it)",
    (i) => (i["serial"] = Number.MAX_SAFE_INTEGER),
    "index has serial 9007199254740991; a serial is at most 9007194959773696 (2^53 − 2^32), so that a later index can still have a higher one",
  ],
  [
    "a serial just above MAX_SERIAL",
    (i) => (i["serial"] = MAX_SERIAL + 1),
    "index has serial 9007194959773697; a serial is at most 9007194959773696 (2^53 − 2^32), so that a later index can still have a higher one",
  ],
  ["another indexVersion", (i) => (i["indexVersion"] = 2), "index has indexVersion `2`; this runtime reads 1"],
  ["an issuedAt that is not RFC 3339", (i) => (i["issuedAt"] = "2025-05-31"), "index has issuedAt `2025-05-31`, not an RFC 3339 date-time"],
  [
    "an expiresAt that is not RFC 3339",
    (i) => (i["expiresAt"] = "2025-02-30T00:00:00Z"),
    "index has expiresAt `2025-02-30T00:00:00Z`, not an RFC 3339 date-time",
  ],
  [
    "an expiresAt before issuedAt",
    (i) => (i["expiresAt"] = "2025-05-01T00:00:00Z"),
    "index expires (`2025-05-01T00:00:00Z`) before it is issued (`2025-05-31T12:00:00Z`)",
  ],
  ["an unknown member", (i) => (i["path"] = "x"), "index: `index` has unknown member `path`"],
  ["a member missing", (i) => delete (i as Record<string, unknown>)["aliases"], "index: `index` lacks `aliases`"],
  [
    "bundles that are not an array",
    (i) => ((i as Record<string, unknown>)["bundles"] = {}),
    "index has `bundles` or `aliases` that is not an array",
  ],
  ["a duplicate entry", (i) => i.bundles.push({ ...i.bundles[0]!, bundle_hash: HASH_B }), "index lists `payments.transfer@1.2.0` twice"],
  ["an entry with a path field", (i) => (i.bundles[0]!["path"] = "../x"), "index: bundle entry has unknown member `path`"],
  [
    "an entry with a bad policy id",
    (i) => (i.bundles[0]!["policyId"] = "../etc"),
    "index lists policy `../etc` version `1.2.0`, not a valid policy id and version",
  ],
  [
    "an entry whose `policyId@version` is longer than MAX_BUNDLE_REF_LENGTH",
    (i) => ((i.bundles[0]!["policyId"] = "p".repeat(MAX_BUNDLE_REF_LENGTH - "@1.2.0".length + 1)), (i.aliases = [])),
    `index lists policy \`${"p".repeat(MAX_BUNDLE_REF_LENGTH - "@1.2.0".length + 1)}\` version \`1.2.0\`, not a valid policy id and version`,
  ],
  [
    "an entry with a version that is not semver",
    (i) => (i.bundles[0]!["version"] = "v1"),
    "index lists policy `payments.transfer` version `v1`, not a valid policy id and version",
  ],
  [
    "an entry with a bad hash",
    (i) => (i.bundles[0]!["bundle_hash"] = "A".repeat(64)),
    "index lists `payments.transfer@1.2.0` with a `bundle_hash` that is not 64 lowercase hex digits",
  ],
  [
    "an alias that is a version",
    (i) => (i.aliases[0]!["alias"] = "1.2.0"),
    "index has alias `1.2.0`; an alias is a lowercase letter, then up to 62 lowercase letters, digits or `-`",
  ],
  [
    "an alias in capitals",
    (i) => (i.aliases[0]!["alias"] = "Stable"),
    "index has alias `Stable`; an alias is a lowercase letter, then up to 62 lowercase letters, digits or `-`",
  ],
  [
    "an alias of 64 characters",
    (i) => (i.aliases[0]!["alias"] = `a${"b".repeat(63)}`),
    `index has alias \`a${"b".repeat(63)}\`; an alias is a lowercase letter, then up to 62 lowercase letters, digits or \`-\``,
  ],
  [
    "an alias to an unlisted version",
    (i) => (i.aliases[0]!["version"] = "9.9.9"),
    "index has alias `payments.transfer@stable` for version `9.9.9`, which it does not list",
  ],
  [
    "an alias to another policy's version",
    (i) => (i.aliases[2]!["version"] = "1.2.0"),
    "index has alias `deploy.production@stable` for version `1.2.0`, which it does not list",
  ],
  ["a duplicate alias", (i) => i.aliases.push({ ...i.aliases[0]! }), "index has alias `payments.transfer@stable` twice"],
  [
    "an alias for a bad policy id",
    (i) => (i.aliases[0]!["policyId"] = "Payments"),
    "index has an alias for `Payments`, not a valid policy id",
  ],
];

function changedIndex(change: Change): Record<string, unknown> {
  const index = JSON.parse(JSON.stringify(INDEX)) as Parameters<Change>[0];
  change(index);
  return index;
}

describe("an invalid index is neither signed nor read (INDEX_INVALID)", () => {
  it.each(INVALID)("%s", (_name, change, message, readMessage = message) => {
    const index = changedIndex(change);
    expect(refusal(() => signSourceIndex(index as unknown as SourceIndex, key))).toMatchObject({
      code: "INDEX_INVALID",
      message,
      bundleDir: INDEX_FILE,
    });
    expect(refusal(() => read(handSigned(index)))).toMatchObject({ code: "INDEX_INVALID", message: readMessage, bundleDir: ORIGIN });
  });

  it("the same alias name for two policies is two aliases", () => {
    expect(read(signSourceIndex(INDEX, key)).index.aliases.filter((a) => a.alias === "stable")).toHaveLength(2);
  });

  it.each<[string, Uint8Array, string]>([
    ["not UTF-8", new Uint8Array([0x7b, 0xfe]), "index is not UTF-8 text"],
    ["not JSON", utf8.encode("{"), "index is not valid JSON: unexpected end of input, expected a string key at line 1 column 2"],
    ["duplicate members", utf8.encode('{"index":{},"index":{}}'), "index is not valid JSON: duplicate key `index` at line 1 column 13"],
    ["not an object", utf8.encode("[]"), "index: index file is not a JSON object"],
    ["no signature", utf8.encode('{"index":{}}'), "index: index file lacks `signature`"],
    ["an unknown envelope member", utf8.encode('{"index":{},"signature":{},"serial":1}'), "index: index file has unknown member `serial`"],
    [
      "a signature member that is not a string",
      utf8.encode('{"index":{},"signature":{"payloadType":1,"keyId":"k","signature":"s"}}'),
      "index has a `signature` whose members are not all strings",
    ],
  ])("%s", (_name, bytes, message) => {
    expect(refusal(() => read(bytes))).toMatchObject({ code: "INDEX_INVALID", message });
  });

  it("larger than MAX_INDEX_BYTES, before it is decoded", () => {
    expect(refusal(() => read(new Uint8Array(MAX_INDEX_BYTES + 1)))).toMatchObject({
      code: "INDEX_INVALID",
      message: `index has ${MAX_INDEX_BYTES + 1} bytes; an index may have at most ${MAX_INDEX_BYTES}`,
    });
  });
});
