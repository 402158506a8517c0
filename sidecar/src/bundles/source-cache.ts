/**
 * The last good set of a remote bundle source, on local disk (`SERVICE_BUNDLE_CACHE_DIR`): so a sidecar restarted
 * without the network serves what it served before. Holds the signed `index.json` as the source served it and one
 * archive per bundle under `archives/`; everything is verified again when read, exactly as when it was fetched.
 *
 * INVARIANT (the cache holds a whole set): archives are written first, the index last, each by write, fsync and
 * rename, and the directory fsynced: a crash leaves the previous index with all its archives, or the new one with all
 * of its own. Archives no index names are removed after the index is in place.
 */
import { mkdir, open, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  INDEX_FILE,
  archiveFileName,
  loadBundleArchive,
  readBundleFile,
  readSourceIndex,
  type BundleTrust,
  type LoadedBundle,
  type PublicKey,
  type SourceIndex,
} from "@writ/runtime";

const ARCHIVES = "archives";

/** A verified set: the index, its bytes as served, its bundles and their archives' bytes (by file name). */
export interface SourceSet {
  readonly index: SourceIndex;
  readonly indexBytes: Uint8Array;
  readonly bundles: readonly LoadedBundle[];
  readonly archives: ReadonlyMap<string, Uint8Array>;
}

export class SourceCache {
  constructor(readonly dir: string) {}

  /**
   * The set kept, verified against `keys` (and expired or not, as `readSourceIndex` decides); null when there is none.
   * @throws BundleError when what is kept does not verify
   */
  async read(keys: readonly PublicKey[], now: Date): Promise<SourceSet | null> {
    const indexBytes = await readBundleFile(this.dir, INDEX_FILE);
    if (indexBytes === null) return null;
    const { index } = readSourceIndex(indexBytes, keys, { now, origin: `cached ${INDEX_FILE}` });
    const trust: BundleTrust = { trustedKeys: keys, requireSignature: true };
    const bundles: LoadedBundle[] = [];
    const archives = new Map<string, Uint8Array>();
    for (const entry of index.bundles) {
      const name = archiveFileName(entry.policyId, entry.version);
      const bytes = await readBundleFile(join(this.dir, ARCHIVES), name);
      if (bytes === null) throw new Error(`the cached index names \`${name}\`, which is not in the cache`);
      bundles.push(await loadBundleArchive(bytes, `cached ${name}`, trust, entry));
      archives.set(name, bytes);
    }
    return { index, indexBytes, bundles, archives };
  }

  /** Keeps `set` in place of `previous` (the set kept before, whose archives need not be written again). */
  async write(set: SourceSet, previous: SourceSet | null): Promise<void> {
    const archives = join(this.dir, ARCHIVES);
    await mkdir(archives, { recursive: true, mode: 0o700 });
    for (const [name, bytes] of set.archives) {
      if (previous?.archives.get(name) !== bytes) await writeDurably(archives, name, bytes);
    }
    await syncDirectory(archives);
    await writeDurably(this.dir, INDEX_FILE, set.indexBytes);
    await syncDirectory(this.dir);
    for (const entry of await readdir(archives)) {
      if (!set.archives.has(entry)) await rm(join(archives, entry), { force: true });
    }
  }
}

async function writeDurably(dir: string, name: string, bytes: Uint8Array): Promise<void> {
  const temporary = join(dir, `.${name}.${process.pid}.tmp`);
  const handle = await open(temporary, "w", 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, join(dir, name));
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
