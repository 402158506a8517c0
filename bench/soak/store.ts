/**
 * A store the soak seeds and runs on: a data dir (the LMDB environment, or on PostgreSQL the signing key and the
 * instance id that names the record log) and, on PostgreSQL, a database of its own. The seeder, the arming before each
 * run and the sidecar itself all open it through the same settings (`sidecarEnv`), so the sidecar finds the record log
 * it was seeded with, signed with its own key.
 *
 * Layout under BENCH_SOAK_DIR: `policies/` and `bundle-key.pub` (the shipped policy compiled and signed once, kept so
 * that the bundle pinned in a kept store stays the one served), `<engine>-<decisions>/` (a store's data dir, with
 * `soak-seed.json` once its seeding finished), `logs/` (each run's sidecar output).
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { NODE_ED25519 } from "@writ/runtime";
import { loadConfig, type Env } from "../../sidecar/src/config.js";
import { loadOrCreateSigningKey } from "../../sidecar/src/keys.js";
import type { StorageBackend } from "../../sidecar/src/storage/backend.js";
import { openBackend } from "../../sidecar/src/storage/registry.js";
import { policiesRoot } from "../sidecar/writ.js";
import pg from "pg";
import type { Engine, SoakSettings } from "./settings.js";

export const API_KEY = "soak-bench-api-key-0123456789abcdef";
/** Upkeep off while seeding and arming: the seeder measures writing, not a sweep of what it wrote. */
const NO_UPKEEP_MS = "86400000";

/** What `soak-seed.json` says of a finished seeding. */
export interface SeedManifest {
  readonly engine: Engine;
  readonly decisions: number;
  /** Unix ms: seeded decisions are dated from `seededAt - spanMs` to `seededAt`. */
  readonly seededAt: number;
  readonly spanMs: number;
  readonly seconds: number;
}

export interface Store {
  readonly engine: Engine;
  readonly decisions: number;
  readonly dir: string;
  /** The database's URL on PostgreSQL; null on LMDB. */
  readonly databaseUrl: string | null;
  readonly databaseName: string | null;
  readonly policies: string;
  readonly bundleKey: string;
  /** LMDB with SERVICE_AUDIT_COMPRESSION on. */
  readonly compress: boolean;
}

export function storeOf(settings: SoakSettings, engine: Engine, decisions: number): Store {
  const compress = settings.compress && engine === "lmdb";
  const name = `${engine}-${decisions}${compress ? "-compressed" : ""}`;
  const databaseName = engine === "postgres" ? `${settings.databasePrefix}soak_${decisions}` : null;
  let databaseUrl: string | null = null;
  if (databaseName !== null) {
    const url = new URL(settings.postgresUrl);
    url.pathname = `/${databaseName}`;
    databaseUrl = url.toString();
  }
  return {
    engine,
    decisions,
    dir: join(settings.root, name),
    databaseUrl,
    databaseName,
    policies: join(settings.root, "policies"),
    bundleKey: join(settings.root, "bundle-key.pub"),
    compress,
  };
}

/** The policies root and bundle key under BENCH_SOAK_DIR, made once. */
export async function preparePolicies(settings: SoakSettings): Promise<void> {
  await mkdir(settings.root, { recursive: true });
  if (!existsSync(join(settings.root, "bundle-key.pub"))) await policiesRoot(settings.root);
}

/** The sidecar's environment on `store`; `extra` adds or overrides settings. */
export function sidecarEnv(store: Store, extra: Env = {}): Record<string, string> {
  const env: Record<string, string | undefined> = {
    SERVICE_API_KEY: API_KEY,
    SERVICE_POLICIES_ROOT: store.policies,
    SERVICE_BUNDLE_KEYS: store.bundleKey,
    SERVICE_DATA_DIR: store.dir,
    SERVICE_PORT: process.env["BENCH_SOAK_PORT"] ?? "0",
    SERVICE_B_PORT: "off",
    SERVICE_LOG_LEVEL: "warn",
    ...(store.databaseUrl === null ? {} : { SERVICE_STORE: "postgres", SERVICE_DATABASE_URL: store.databaseUrl }),
    ...(store.compress ? { SERVICE_AUDIT_COMPRESSION: "on" } : {}),
    ...extra,
  };
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

/** The store's backend, opened as the sidecar opens it, its upkeep off: for seeding and arming. */
export async function openStore(store: Store): Promise<StorageBackend> {
  const config = loadConfig(
    sidecarEnv(store, { SERVICE_REPLAY_SWEEP_INTERVAL_MS: NO_UPKEEP_MS, SERVICE_AUDIT_PRUNE_INTERVAL_MS: NO_UPKEEP_MS }),
  );
  const { key } = await loadOrCreateSigningKey(join(store.dir, "signing.key"));
  return openBackend(config, { onAuditError: (error) => console.error("audit error:", error) }, [], { key, engine: NODE_ED25519 });
}

export async function signingKeyOf(store: Store) {
  return (await loadOrCreateSigningKey(join(store.dir, "signing.key"))).key;
}

const MANIFEST = "soak-seed.json";

export async function readManifest(store: Store): Promise<SeedManifest | null> {
  try {
    return JSON.parse(await readFile(join(store.dir, MANIFEST), "utf8")) as SeedManifest;
  } catch {
    return null;
  }
}

export async function writeManifest(store: Store, manifest: SeedManifest): Promise<void> {
  await writeFile(join(store.dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
}

export async function admin<T>(settings: SoakSettings, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: settings.postgresUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Removes the store: its data dir, and its database. */
export async function removeStore(settings: SoakSettings, store: Store): Promise<void> {
  await rm(store.dir, { recursive: true, force: true });
  if (store.databaseName !== null)
    await admin(settings, (client) => client.query(`DROP DATABASE IF EXISTS ${store.databaseName} WITH (FORCE)`));
}

/** Removes the store and makes it anew, empty. */
export async function emptyStore(settings: SoakSettings, store: Store): Promise<void> {
  await removeStore(settings, store);
  await mkdir(store.dir, { recursive: true, mode: 0o700 });
  if (store.databaseName !== null) await admin(settings, (client) => client.query(`CREATE DATABASE ${store.databaseName}`));
}

export interface StoreSize {
  readonly bytes: number;
  /** What the store's parts hold, largest first (LMDB: each named database's pages; PostgreSQL: each table with its indexes and TOAST). */
  readonly parts: readonly { readonly name: string; readonly bytes: number; readonly entries: number | null }[];
  /** LMDB only: data.mdb's size on disk, beside the live pages above. */
  readonly fileBytes: number | null;
}

/** How much the store takes; LMDB's environment must not be open in another process meanwhile (it is read only here). */
export async function storeSize(store: Store): Promise<StoreSize> {
  if (store.databaseName === null) {
    const { open } = await import("lmdb");
    const root = open({ path: store.dir, maxDbs: 32, readOnly: true });
    try {
      const parts = [];
      for (const name of Array.from(root.getKeys({}))) {
        if (typeof name !== "string") continue;
        const s = root.openDB({ name }).getStats() as {
          pageSize: number;
          treeBranchPageCount: number;
          treeLeafPageCount: number;
          overflowPages: number;
          entryCount: number;
        };
        parts.push({ name, bytes: (s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages) * s.pageSize, entries: s.entryCount });
      }
      parts.sort((a, b) => b.bytes - a.bytes);
      return { bytes: parts.reduce((sum, p) => sum + p.bytes, 0), parts, fileBytes: (await stat(join(store.dir, "data.mdb"))).size };
    } finally {
      await root.close();
    }
  }
  const url = store.databaseUrl!;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; bytes: string; entries: string }>(
      `SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes, c.reltuples::bigint AS entries
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.relkind = 'r' AND n.nspname = 'public' AND c.relname LIKE 'writ\\_%' ORDER BY 2 DESC`,
    );
    const parts = rows.map((r) => ({ name: r.name, bytes: Number(r.bytes), entries: Number(r.entries) < 0 ? null : Number(r.entries) }));
    return { bytes: parts.reduce((sum, p) => sum + p.bytes, 0), parts, fileBytes: null };
  } finally {
    await client.end();
  }
}
