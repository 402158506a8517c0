/**
 * The data dir's free-space reserve (docs/sidecar.md, "A full disk, a failing data dir"): a watcher reads the free space
 * of the data dir's file system (`statfs`, off the event loop) every SAMPLE_INTERVAL_MS, and below the reserve
 * (SERVICE_DATA_DIR_RESERVE) holds every write of the LMDB environment before it is queued (runtime `LmdbDurability`
 * HOLD): requests that would write answer 503, `/health`'s `store` says why. So lmdb-js never meets a full disk on
 * writ's writes, where a failed page write can abort its process (scripts/repro/lmdb-full-disk-abort.mjs). Writes resume
 * by themselves once the free space is back above the reserve by RESUME_MARGIN of it.
 *
 * Why the reserve holds: what writ writes between the last sample above the reserve and the hold is bounded by its write
 * rate over one interval, or over SAMPLE_DEADLINE_MS when a sample is slow (past it, an unanswered sample holds writes
 * too), plus the writes already queued then. The sizing, with measured rates, is in docs/sidecar.md.
 */
import { statfs } from "node:fs/promises";
import type { DataDirReserve } from "./config.js";

/** How often the free space is read. */
export const SAMPLE_INTERVAL_MS = 100;
/** A sample not answered this long after it began holds writes: free space unknown (a hung file system). */
export const SAMPLE_DEADLINE_MS = 1_000;
/** The default reserve: the larger of this and DEFAULT_RESERVE_SHARE of the file system. */
export const DEFAULT_RESERVE_BYTES = 256 * 2 ** 20;
export const DEFAULT_RESERVE_SHARE = 0.02;
/** Writes resume once the free space is this share of the reserve above it: a disk at the line does not flap. */
const RESUME_MARGIN = 1 / 16;

export interface DiskSpace {
  /** What an unprivileged process may still write (statfs `f_bavail`): root's own reserved blocks are not counted. */
  readonly freeBytes: number;
  readonly totalBytes: number;
}

/** The free and total bytes of the file system holding `dir`. */
export async function diskSpace(dir: string): Promise<DiskSpace> {
  const stats = await statfs(dir);
  return { freeBytes: stats.bavail * stats.bsize, totalBytes: stats.blocks * stats.bsize };
}

/** The reserve in bytes of a file system of `totalBytes`: as set, or by default the larger of DEFAULT_RESERVE_BYTES and DEFAULT_RESERVE_SHARE of it. */
export function reserveBytes(setting: DataDirReserve, totalBytes: number): number {
  if (setting === "default") return Math.max(DEFAULT_RESERVE_BYTES, Math.ceil(totalBytes * DEFAULT_RESERVE_SHARE));
  return "bytes" in setting ? setting.bytes : Math.ceil((totalBytes * setting.percent) / 100);
}

/** `bytes` for a person: binary units, one decimal. */
export function formatBytes(bytes: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

export interface FreeSpaceWatchOptions {
  /** Reads the free space (tests script it); `diskSpace` of the data dir by default. */
  readonly read?: () => Promise<DiskSpace>;
  readonly intervalMs?: number;
  readonly deadlineMs?: number;
}

/** Holds writes (`hold(reason)`) below the reserve, lets them through (`hold(null)`) once above it again. */
export class FreeSpaceWatch {
  readonly reserveBytes: number;
  readonly #read: () => Promise<DiskSpace>;
  readonly #hold: (reason: string | null) => void;
  readonly #deadlineMs: number;
  readonly #timer: NodeJS.Timeout;
  /** When the sample under way began; null when none is. */
  #sampling: number | null = null;
  #held = false;
  /** The deadline's verdict, waiting for the I/O callbacks of this turn of the loop (`#sample`). */
  #verdict: NodeJS.Immediate | null = null;

  /**
   * Reads the free space once (holding writes from the start when below the reserve), then every `intervalMs`.
   * @throws the file system's error when the first read fails
   */
  static async start(dataDir: string, setting: DataDirReserve, hold: (reason: string | null) => void, options: FreeSpaceWatchOptions = {}) {
    const read = options.read ?? (() => diskSpace(dataDir));
    const first = await read();
    const watch = new FreeSpaceWatch(reserveBytes(setting, first.totalBytes), read, hold, options);
    watch.#judge(first);
    return watch;
  }

  private constructor(
    reserve: number,
    read: () => Promise<DiskSpace>,
    hold: (reason: string | null) => void,
    options: FreeSpaceWatchOptions,
  ) {
    this.reserveBytes = reserve;
    this.#read = read;
    this.#hold = hold;
    this.#deadlineMs = options.deadlineMs ?? SAMPLE_DEADLINE_MS;
    this.#timer = setInterval(() => this.#sample(), options.intervalMs ?? SAMPLE_INTERVAL_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    if (this.#verdict !== null) clearImmediate(this.#verdict);
  }

  /**
   * One read at a time: one still unanswered past the deadline holds writes until a read answers. The verdict waits for
   * the loop's I/O phase: after the loop was blocked (a long GC, a starved process) the timers run before the I/O
   * callbacks, so a read answered meanwhile would otherwise count as unanswered and hold writes for nothing.
   */
  #sample(): void {
    const started = this.#sampling;
    if (started !== null) {
      if (Date.now() - started >= this.#deadlineMs && this.#verdict === null) {
        this.#verdict = setImmediate(() => {
          this.#verdict = null;
          const waited = Date.now() - started;
          if (this.#sampling === started) this.#holdFor(`the data dir's free space is unknown: statfs has not answered for ${waited} ms`);
        });
      }
      return;
    }
    this.#sampling = Date.now();
    this.#read().then(
      (space) => {
        this.#sampling = null;
        this.#judge(space);
      },
      (error: unknown) => {
        this.#sampling = null;
        this.#holdFor(`reading the data dir's free space failed: ${error instanceof Error ? error.message : String(error)}`);
      },
    );
  }

  #judge({ freeBytes }: DiskSpace): void {
    const resume = Math.ceil(this.reserveBytes * (1 + RESUME_MARGIN));
    if (freeBytes < this.reserveBytes || (this.#held && freeBytes < resume)) {
      this.#holdFor(
        `the data dir's disk has ${formatBytes(freeBytes)} free: writes are refused from below its reserve of ${formatBytes(this.reserveBytes)} (SERVICE_DATA_DIR_RESERVE) until it has ${formatBytes(resume)} free`,
      );
    } else {
      this.#held = false;
      this.#hold(null);
    }
  }

  #holdFor(reason: string): void {
    this.#held = true;
    this.#hold(reason);
  }
}
