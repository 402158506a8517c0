/**
 * The soak benchmark's settings, from the environment (bench/soak.ts lists them). Every bad value stops the run with
 * a line naming the variable: a benchmark must not measure something else than it says.
 */
import { cpus } from "node:os";
import { resolve } from "node:path";

export type Engine = "lmdb" | "postgres";

export interface SoakSettings {
  /** Decisions in the large store (BENCH_SOAK_DECISIONS). */
  readonly decisions: number;
  /** Decisions in the small store it is compared with, in the same run (BENCH_SOAK_SMALL). */
  readonly small: number;
  readonly engines: readonly Engine[];
  /** Seconds of measured load (BENCH_SOAK_DURATION). */
  readonly durationSeconds: number;
  /** Seconds of unmeasured load first (BENCH_SOAK_WARMUP): the sidecar's JIT, caches and pools warm. */
  readonly warmupSeconds: number;
  readonly connections: number;
  /** Requests per second the load is paced at (BENCH_SOAK_RATE, bench/sidecar/wrk.ts); null (unset or 0): unpaced, saturating. */
  readonly rate: number | null;
  /** Where seeded stores, the policies root and the sidecar logs are kept (BENCH_SOAK_DIR). */
  readonly root: string;
  /** The PostgreSQL server the databases are created on (WRIT_TEST_POSTGRES_URL, as the tests). */
  readonly postgresUrl: string;
  /** Seed the large store again even when a complete one is kept (BENCH_SOAK_RESEED=1). */
  readonly reseed: boolean;
  /** Keep the large store after its run, for the next (BENCH_SOAK_KEEP, default 1; 0 removes it). */
  readonly keep: boolean;
  /** Only seed, do not run (BENCH_SOAK_SEED_ONLY=1): to time the seeding or prepare a store. */
  readonly seedOnly: boolean;
  /** How far back seeded decisions reach, spread evenly (BENCH_SOAK_SPAN_DAYS). */
  readonly spanDays: number;
  readonly sweepIntervalMs: number;
  readonly pruneIntervalMs: number;
  /** Decisions past their retention written before each run (BENCH_SOAK_DUE): what the retention run removes. */
  readonly due: number;
  /** Replay entries written before each run that expire during it (BENCH_SOAK_EXPIRING): what the sweeps remove. */
  readonly expiring: number;
  /** Cores for the sidecar and for the load generator with the probes (BENCH_SOAK_CPUS, `sidecar,load`); null: not pinned. */
  readonly cpus: { readonly sidecar: string; readonly load: string } | null;
  /**
   * Cores the PostgreSQL server's processes are moved to for each run when it runs on this host (BENCH_SOAK_DATABASE_CPUS,
   * a taskset list; default the load's cores when pinned; `off`: left where they are): off the sidecar's core, as a
   * fleet's database is on hosts of its own.
   */
  readonly databaseCpus: string | null;
  /** Node's flags for the sidecar (BENCH_SOAK_NODE_ARGS, space-separated): `--cpu-prof --cpu-prof-dir=<dir>` to profile it. */
  readonly nodeArgs: readonly string[];
  readonly healthEveryMs: number;
  /** Whole-log exports beside the load (BENCH_SOAK_EXPORTS): one after another (`loop`), one (`once`), or none (`off`). */
  readonly exports: "loop" | "once" | "off";
  /** BENCH_SOAK_COMPRESSION=on: LMDB stores seeded and run with SERVICE_AUDIT_COMPRESSION on, under names of their own. */
  readonly compress: boolean;
  /**
   * Seconds of the same load with the same probes but no export, after the measured load (BENCH_SOAK_REFERENCE, default
   * 15; 0: none): what the sidecar uses without the export, so that the export's share of the core and of the disk reads
   * is the difference. Judged only with a paced load (BENCH_SOAK_RATE): unpaced, the load takes whatever the export leaves.
   */
  readonly referenceSeconds: number;
  /** What every PostgreSQL database this benchmark creates is named with first (BENCH_PG_DATABASE_PREFIX, default `writ_`). */
  readonly databasePrefix: string;
}

/** A prefix of PostgreSQL database names: lower case, digits and `_`, starting with a letter or `_`. */
export function databasePrefix(env: NodeJS.ProcessEnv = process.env): string {
  const raw = env["BENCH_PG_DATABASE_PREFIX"] ?? "writ_";
  if (!/^[a-z_][a-z0-9_]{0,40}$/.test(raw))
    throw new Error(
      `BENCH_PG_DATABASE_PREFIX must be lower-case letters, digits and \`_\` (at most 41), starting with a letter or \`_\`, not \`${raw}\``,
    );
  return raw;
}

function count(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const value = Number(raw.replaceAll("_", ""));
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be an integer of at least ${min}, not \`${raw}\``);
  return value;
}

function engines(raw: string | undefined): readonly Engine[] {
  switch (raw ?? "both") {
    case "both":
      return ["lmdb", "postgres"];
    case "lmdb":
      return ["lmdb"];
    case "postgres":
      return ["postgres"];
    default:
      throw new Error(`BENCH_SOAK_ENGINE must be \`lmdb\`, \`postgres\` or \`both\`, not \`${raw}\``);
  }
}

function cpuPair(raw: string | undefined): SoakSettings["cpus"] {
  if (raw === "off") return null;
  if (raw === undefined) return cpus().length >= 2 ? { sidecar: "0", load: "1" } : null;
  const match = /^([0-9,-]+):([0-9,-]+)$/.exec(raw);
  if (match === null)
    throw new Error(`BENCH_SOAK_CPUS must be \`<sidecar cpus>:<load cpus>\` (taskset lists, e.g. \`0:1\`) or \`off\`, not \`${raw}\``);
  return { sidecar: match[1]!, load: match[2]! };
}

function exportMode(raw: string | undefined): SoakSettings["exports"] {
  if (raw === undefined) return "loop";
  if (raw === "loop" || raw === "once" || raw === "off") return raw;
  throw new Error(`BENCH_SOAK_EXPORTS must be \`loop\`, \`once\` or \`off\`, not \`${raw}\``);
}

function databaseCpus(raw: string | undefined, pair: SoakSettings["cpus"]): string | null {
  if (raw === "off") return null;
  if (raw === undefined) return pair?.load ?? null;
  if (!/^[0-9,-]+$/.test(raw)) throw new Error(`BENCH_SOAK_DATABASE_CPUS must be a taskset list (e.g. \`1\`) or \`off\`, not \`${raw}\``);
  return raw;
}

export function soakSettings(env: NodeJS.ProcessEnv = process.env): SoakSettings {
  const decisions = count(env, "BENCH_SOAK_DECISIONS", 10_000_000, 1_000);
  const small = count(env, "BENCH_SOAK_SMALL", 10_000, 1_000);
  if (small >= decisions) throw new Error(`BENCH_SOAK_SMALL (${small}) must be below BENCH_SOAK_DECISIONS (${decisions})`);
  const durationSeconds = count(env, "BENCH_SOAK_DURATION", 60, 5);
  const sweepIntervalMs = count(env, "BENCH_SOAK_SWEEP_MS", 20_000, 100);
  const pruneIntervalMs = count(env, "BENCH_SOAK_PRUNE_MS", 25_000, 100);
  const cpus = cpuPair(env["BENCH_SOAK_CPUS"]);
  return {
    decisions,
    small,
    engines: engines(env["BENCH_SOAK_ENGINE"]),
    durationSeconds,
    warmupSeconds: count(env, "BENCH_SOAK_WARMUP", 3, 0),
    connections: count(env, "BENCH_SOAK_CONNECTIONS", 50, 1),
    rate: count(env, "BENCH_SOAK_RATE", 0, 0) || null,
    root: resolve(env["BENCH_SOAK_DIR"] ?? "/work/soak-data"),
    postgresUrl: env["WRIT_TEST_POSTGRES_URL"] ?? "postgresql://postgres@127.0.0.1:5432/postgres",
    reseed: env["BENCH_SOAK_RESEED"] === "1",
    keep: env["BENCH_SOAK_KEEP"] !== "0",
    seedOnly: env["BENCH_SOAK_SEED_ONLY"] === "1",
    spanDays: count(env, "BENCH_SOAK_SPAN_DAYS", 365, 1),
    sweepIntervalMs,
    pruneIntervalMs,
    due: count(env, "BENCH_SOAK_DUE", 1_000, 0),
    expiring: count(env, "BENCH_SOAK_EXPIRING", 3_000, 0),
    cpus,
    nodeArgs: (env["BENCH_SOAK_NODE_ARGS"] ?? "").split(" ").filter((arg) => arg !== ""),
    databaseCpus: databaseCpus(env["BENCH_SOAK_DATABASE_CPUS"], cpus),
    healthEveryMs: count(env, "BENCH_SOAK_HEALTH_MS", 50, 10),
    exports: exportMode(env["BENCH_SOAK_EXPORTS"]),
    compress: env["BENCH_SOAK_COMPRESSION"] === "on",
    referenceSeconds: count(env, "BENCH_SOAK_REFERENCE", 15, 0),
    databasePrefix: databasePrefix(env),
  };
}
