/**
 * One-file bundle archives, `{policyId}@{version}.bundle.json` (docs/bundles.md): the JCS canonical form of
 * `{"archiveVersion": 1, "policyId", "version", "bundle_hash", "files": {"<name>": "<exact text>"}}`, holding the
 * bundle's files (those the manifest names, the manifest, and `bundle.sig` when there is one) as text.
 *
 * INVARIANT (an archive follows from its bundle alone): packing reads nothing but the files given, and JCS fixes the
 * member order and every string's spelling, so the same bundle always packs to the same bytes. Each file's text is
 * its exact bytes decoded as UTF-8 (a byte order mark kept), and UTF-8 encoding gives those bytes back, so a file's
 * hash in the manifest holds for the archived text. The header (`policyId`, `version`, `bundle_hash`) is not signed:
 * `loadBundleArchive` proves it against the manifest, and the manifest against `bundle.sig`.
 */
import { canonicalBytes } from "../canonical/jcs.js";
import { BundleError, StrictJsonError } from "../errors.js";
import { parseStrictJson } from "../json/strict-parse.js";
import { isJsonObject } from "./json-object.js";
import { shown, shownValue } from "./shown.js";
import { BUNDLE_FILES, MANIFEST_FILE, SHA256_HEX_PATTERN, SIGNATURE_FILE, isBundleRef, type BundleManifest } from "./format.js";
import { parseBundleJson, verifyBundleFiles, type BundleExpectation, type BundleTrust, type LoadedBundle } from "./verify.js";

export const ARCHIVE_VERSION = 1;
export const ARCHIVE_SUFFIX = ".bundle.json";

/**
 * The largest archive read or written. A compiled bundle is kilobytes (docs/compiler.md), so this leaves room for any
 * reviewable policy while bounding what one archive from a remote source can make a process hold: the bytes, their
 * text, the parsed strings and the re-encoded files, each at most this size. It equals MAX_BUNDLE_FILE_BYTES, the cap
 * on one file of a bundle directory.
 */
export const MAX_ARCHIVE_BYTES = 16 * 1024 * 1024;

/** The file names an archive may hold: a bundle's files, its manifest and its signature. */
export const ARCHIVE_FILE_NAMES: readonly string[] = [...Object.values(BUNDLE_FILES), MANIFEST_FILE, SIGNATURE_FILE];

const ARCHIVE_MEMBERS = ["archiveVersion", "bundle_hash", "files", "policyId", "version"] as const;

/** `policyId` and `version` are those of a bundle (`isBundleRef`), so the name is one path segment. */
export function archiveFileName(policyId: string, version: string): string {
  return `${policyId}@${version}${ARCHIVE_SUFFIX}`;
}

export interface BundleArchive {
  readonly policyId: string;
  readonly version: string;
  readonly bundleHash: string;
  /** File name to its exact bytes. */
  readonly files: ReadonlyMap<string, Uint8Array>;
}

const utf8 = new TextEncoder();
/** Fatal: a file that is not UTF-8 is refused, never altered. ignoreBOM: a leading byte order mark is kept as text. */
const exactText = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The archive of a bundle, from its files by name as in its directory. Structural only (the caller verifies the
 * bundle, e.g. by loading the archive): every name must be a bundle file name, every file the manifest names present,
 * every file UTF-8 text.
 * @throws BundleError (BUNDLE_INVALID) saying what is wrong
 */
export function packBundleArchive(files: ReadonlyMap<string, Uint8Array>): Uint8Array {
  const origin = "bundle";
  const bad = (why: string): never => {
    throw new BundleError("BUNDLE_INVALID", why, origin);
  };
  const manifestBytes = files.get(MANIFEST_FILE) ?? bad(`bundle has no \`${MANIFEST_FILE}\``);
  const manifest = parseBundleJson(origin, MANIFEST_FILE, manifestBytes) as Partial<BundleManifest> | null;
  if (typeof manifest !== "object" || manifest === null || !isBundleRef(manifest.policyId, manifest.version)) {
    return bad(`\`${MANIFEST_FILE}\` names no valid policy id and version`);
  }
  if (typeof manifest.bundle_hash !== "string" || !SHA256_HEX_PATTERN.test(manifest.bundle_hash))
    return bad(`\`${MANIFEST_FILE}\` has no valid \`bundle_hash\``);
  for (const name of Object.keys(isJsonObject(manifest.files) ? manifest.files : {})) {
    if (!files.has(name)) bad(`file \`${shown(name)}\` listed in the manifest is missing`);
  }
  const texts: Record<string, string> = {};
  for (const [name, bytes] of files) {
    if (!ARCHIVE_FILE_NAMES.includes(name)) bad(`\`${shown(name)}\` is not a bundle file`);
    try {
      texts[name] = exactText.decode(bytes);
    } catch {
      bad(`\`${name}\` is not UTF-8 text`);
    }
  }
  const archive = canonicalBytes({
    archiveVersion: ARCHIVE_VERSION,
    policyId: manifest.policyId,
    version: manifest.version,
    bundle_hash: manifest.bundle_hash,
    files: texts,
  });
  if (archive.length > MAX_ARCHIVE_BYTES)
    bad(`archive would have ${archive.length} bytes; an archive may have at most ${MAX_ARCHIVE_BYTES}`);
  return archive;
}

/**
 * The parts of an archive, checked for shape only (nothing is verified: see {@link loadBundleArchive}): at most
 * MAX_ARCHIVE_BYTES of UTF-8 strict JSON, exactly the archive's members, a valid policy id, version and hash, and
 * files under bundle file names only, the manifest among them.
 * @throws BundleError (BUNDLE_INVALID) saying what is wrong; its `bundleDir` is `origin` (a file name or URL)
 */
export function readBundleArchive(bytes: Uint8Array, origin: string): BundleArchive {
  const bad = (why: string): never => {
    throw new BundleError("BUNDLE_INVALID", `archive ${why}`, origin);
  };
  if (bytes.length > MAX_ARCHIVE_BYTES) bad(`has ${bytes.length} bytes; an archive may have at most ${MAX_ARCHIVE_BYTES}`);
  let text = "";
  try {
    text = exactText.decode(bytes);
  } catch {
    bad("is not UTF-8 text");
  }
  let value: unknown;
  try {
    // Depth 2: the archive object and its `files` object; nothing nests deeper.
    value = parseStrictJson(text, { maxDepth: 2 });
  } catch (e) {
    if (!(e instanceof StrictJsonError)) throw e;
    bad(`is not valid JSON: ${e.message}`);
  }
  if (!isJsonObject(value)) return bad("is not a JSON object");
  for (const key of Object.keys(value)) {
    if (!(ARCHIVE_MEMBERS as readonly string[]).includes(key)) bad(`has unknown member \`${shown(key)}\``);
  }
  for (const key of ARCHIVE_MEMBERS) {
    if (!Object.hasOwn(value, key)) bad(`lacks \`${key}\``);
  }
  const { archiveVersion, policyId, version, bundle_hash: bundleHash, files } = value;
  if (archiveVersion !== ARCHIVE_VERSION)
    bad(`has archiveVersion \`${shownValue(archiveVersion)}\`; this runtime reads ${ARCHIVE_VERSION}`);
  if (!isBundleRef(policyId, version)) bad("names no valid policy id and version");
  if (typeof bundleHash !== "string" || !SHA256_HEX_PATTERN.test(bundleHash))
    bad("has a `bundle_hash` that is not 64 lowercase hex digits");
  if (!isJsonObject(files)) return bad("has `files` that is not an object");
  const contents = new Map<string, Uint8Array>();
  for (const [name, content] of Object.entries(files)) {
    if (!ARCHIVE_FILE_NAMES.includes(name)) bad(`holds unknown file \`${shown(name)}\``);
    if (typeof content !== "string") bad(`holds file \`${name}\` that is not a string`);
    contents.set(name, utf8.encode(content as string));
  }
  if (!contents.has(MANIFEST_FILE)) bad(`holds no \`${MANIFEST_FILE}\``);
  return { policyId: policyId as string, version: version as string, bundleHash: bundleHash as string, files: contents };
}

/**
 * Loads a bundle from its archive and proves it whole exactly as `loadBundle` proves a directory (the same
 * `verifyBundleFiles`), and that it is the bundle its header names. With `expect`, it must be that bundle (and, given
 * `bundle_hash`, e.g. a source index entry, that exact content). `LoadedBundle.dir` is `origin`.
 * @throws BundleError
 */
export async function loadBundleArchive(
  bytes: Uint8Array,
  origin: string,
  trust: BundleTrust,
  expect?: BundleExpectation,
): Promise<LoadedBundle> {
  const archive = readBundleArchive(bytes, origin);
  if (expect && (expect.policyId !== archive.policyId || expect.version !== archive.version)) {
    throw new BundleError(
      "BUNDLE_INVALID",
      `archive holds \`${archive.policyId}@${archive.version}\`, expected \`${expect.policyId}@${expect.version}\``,
      origin,
    );
  }
  if (expect?.bundle_hash !== undefined && expect.bundle_hash !== archive.bundleHash) {
    throw new BundleError(
      "BUNDLE_TAMPERED",
      `archive has \`bundle_hash\` \`${archive.bundleHash}\`, expected \`${expect.bundle_hash}\``,
      origin,
    );
  }
  const { policyId, version, bundleHash } = archive;
  return verifyBundleFiles(archive.files, { origin, container: "archive" }, { policyId, version, bundle_hash: bundleHash }, trust);
}
