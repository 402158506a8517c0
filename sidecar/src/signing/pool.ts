/**
 * Ed25519 signing and self-verification on worker threads (docs/sidecar.md, "Signing threads"): `sign` hands the input
 * to a thread running libsodium and resolves once that thread signed it and verified the signature. The requests of one
 * turn of the event loop are posted at its check phase (setImmediate), split over the threads with the fewest in hand:
 * one message each way per thread and turn. `verify` runs on the calling thread.
 *
 * Keys are checked here and given to every thread once (at its start, or in one message when first used), never with a
 * request, and kept for the pool's life. A thread that stops (a crash, an exit) is replaced; the requests it held
 * reject with SignerUnavailableError (503): nothing was signed, so nothing was stored or answered. A thread with
 * requests in hand keeps the process alive; an idle one does not.
 */
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import {
  SignerUnavailableError,
  selfVerificationFailed,
  type Ed25519Engine,
  type PublicKey,
  type SelfVerifyingSignature,
  type SigningKey,
} from "@writ/runtime";
import { secretKeyOf } from "../sodium-engine.js";
import { READY, RESULT_BYTES, type BatchAnswer, type ThreadData, type ThreadKey } from "./protocol.js";

/** Run from the sources (tests, tsx), the thread's script is TypeScript; from the build, tsup's `signing-worker` entry. */
const FROM_SOURCE = import.meta.url.endsWith(".ts");
export const SIGNING_THREAD_SCRIPT = new URL(FROM_SOURCE ? "./worker.ts" : "./signing-worker.js", import.meta.url);

/** A replacement that stops again before answering anything waits this long times 2^(stops in a row - 2), up to MAX. */
const RESPAWN_DELAY_MS = 100;
const MAX_RESPAWN_DELAY_MS = 5_000;

export interface SigningPoolOptions {
  /** How many threads; at least 1. */
  readonly threads: number;
  /** This thread's engine: `verify` is its. libsodium in the sidecar. */
  readonly inline: Ed25519Engine;
  /** Keys every thread holds from its start (the signer's). */
  readonly keys?: readonly SigningKey[];
  /** Told when a thread stopped, and that it is being replaced. */
  readonly onThreadStopped?: (message: string) => void;
  /** The threads' script: SIGNING_THREAD_SCRIPT (a test gives one that crashes on cue). */
  readonly script?: URL;
}

/** What `/metrics` shows of the pool. */
export interface SigningPoolStats {
  /** Threads configured (SERVICE_SIGNING_THREADS). */
  readonly threads: number;
  /** Threads running now (fewer while one is being replaced). */
  readonly running: number;
  /** Requests collected in this turn of the event loop, not yet posted. */
  readonly queued: number;
  /** Requests posted to a thread and not yet answered. */
  readonly signing: number;
  /** Threads that stopped and were replaced since the start. */
  readonly replaced: number;
}

interface Request {
  readonly input: Uint8Array;
  readonly slot: number;
  resolve(signed: SelfVerifyingSignature): void;
  reject(error: unknown): void;
}

interface Posted {
  readonly requests: readonly Request[];
  readonly postedAt: number;
}

interface Thread {
  readonly worker: Worker;
  /** The worker's threadId, kept: it reads -1 once the thread has exited. */
  readonly id: number;
  readonly batches: Map<number, Posted>;
  /** Requests in `batches`. */
  requests: number;
  /** Why it stopped, when an error did it. */
  error: Error | null;
}

const VERIFIED: Promise<void> = Promise.resolve();

/**
 * A thread running `script`. From the sources, the script is TypeScript, and node 20 gives a worker none of the
 * process's module hooks (`--import tsx`): tsx's require hook compiles it there.
 */
function threadOf(script: URL, data: ThreadData): Worker {
  if (!script.pathname.endsWith(".ts")) return new Worker(script, { workerData: data });
  const boot = `require("tsx/cjs/api").register(); require(require("node:worker_threads").workerData.script);`;
  // No inherited flags: `--input-type=module` would make the boot code a module, without `require`.
  return new Worker(boot, { eval: true, execArgv: [], workerData: { ...data, script: fileURLToPath(script) } });
}

export class SigningPool implements Ed25519Engine {
  readonly name: string;
  readonly #options: SigningPoolOptions;
  readonly #script: URL;
  readonly #threads: Thread[] = [];
  readonly #keys: ThreadKey[] = [];
  readonly #slots = new WeakMap<SigningKey, number>();
  #queue: Request[] = [];
  #scheduled = false;
  #nextBatch = 0;
  #replaced = 0;
  /** Threads that stopped since a thread last answered a batch: the replacements' back-off. */
  #stopsInARow = 0;
  #respawn: NodeJS.Timeout | null = null;
  #closed = false;
  #closing: Promise<void> | null = null;
  #onBatch: ((seconds: number, requests: number) => void) | null = null;

  private constructor(options: SigningPoolOptions) {
    if (!Number.isInteger(options.threads) || options.threads < 1)
      throw new RangeError(`a signing pool needs 1 thread or more, not ${options.threads}`);
    this.#options = options;
    this.#script = options.script ?? SIGNING_THREAD_SCRIPT;
    this.name = `${options.inline.name} on ${options.threads} signing thread${options.threads === 1 ? "" : "s"}`;
    for (const key of options.keys ?? []) this.#slotOf(key);
  }

  /**
   * A pool whose threads all started (sodium-native loaded in each, the keys held).
   * @throws KeyError when a key is unusable; Error when a thread does not start (the pool is closed then)
   */
  static async start(options: SigningPoolOptions): Promise<SigningPool> {
    const pool = new SigningPool(options);
    const started = Array.from({ length: options.threads }, () => pool.#spawn());
    try {
      await Promise.all(started);
    } catch (error) {
      await pool.close();
      throw error;
    }
    return pool;
  }

  sign(input: Uint8Array, key: SigningKey): Promise<SelfVerifyingSignature> {
    if (this.#closed) return Promise.reject(new SignerUnavailableError("the signing pool is closed"));
    let slot: number;
    try {
      slot = this.#slotOf(key);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<SelfVerifyingSignature>((resolve, reject) => {
      this.#queue.push({ input, slot, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(this.#flush);
      }
    });
  }

  verify(input: Uint8Array, signature: Uint8Array, key: PublicKey): boolean {
    return this.#options.inline.verify(input, signature, key);
  }

  stats(): SigningPoolStats {
    let signing = 0;
    for (const thread of this.#threads) signing += thread.requests;
    return { threads: this.#options.threads, running: this.#threads.length, queued: this.#queue.length, signing, replaced: this.#replaced };
  }

  /** `listener` is told each batch's time from posting to answer, and its number of requests (one listener: `/metrics`). */
  observeBatches(listener: (seconds: number, requests: number) => void): void {
    this.#onBatch = listener;
  }

  /** Stops every thread; requests not yet answered reject with SignerUnavailableError. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      if (this.#respawn !== null) clearTimeout(this.#respawn);
      const threads = [...this.#threads];
      await Promise.all(threads.map((thread) => thread.worker.terminate()));
      this.#rejectAll(this.#queue, "the signing pool closed before these requests were signed");
      this.#queue = [];
    })();
    return this.#closing;
  }

  /** The slot of `key` in every thread, given to them at its first use. */
  #slotOf(key: SigningKey): number {
    let slot = this.#slots.get(key);
    if (slot === undefined) {
      const threadKey: ThreadKey = { kind: "key", slot: this.#keys.length, secret: new Uint8Array(secretKeyOf(key)) };
      slot = threadKey.slot;
      this.#keys.push(threadKey);
      this.#slots.set(key, slot);
      for (const thread of this.#threads) thread.worker.postMessage(threadKey);
    }
    return slot;
  }

  /** Starts a thread, at once in service (requests posted before it is ready wait in its port); resolves once ready. */
  #spawn(): Promise<void> {
    const worker = threadOf(this.#script, { keys: this.#keys });
    const thread: Thread = { worker, id: worker.threadId, batches: new Map(), requests: 0, error: null };
    this.#threads.push(thread);
    const ready = new Promise<void>((resolve, reject) => {
      worker.on("message", (message: BatchAnswer | typeof READY) => {
        if (message !== READY) return this.#answered(thread, message);
        // Held until ready, so a start is not cut short by a loop with nothing else to do.
        if (thread.requests === 0) worker.unref();
        resolve();
      });
      worker.on("error", (error) => (thread.error = error));
      worker.once("exit", (code) => {
        reject(new Error(`a signing thread did not start: ${thread.error?.message ?? `it exited with code ${code}`}`));
        this.#stopped(thread, code);
      });
    });
    // Only `start` awaits readiness; a replacement's failure to start is reported as a stop.
    ready.catch(() => {});
    return ready;
  }

  #flush = (): void => {
    this.#scheduled = false;
    const queue = this.#queue;
    this.#queue = [];
    if (this.#closed) return this.#rejectAll(queue, "the signing pool closed before these requests were signed");
    const count = Math.min(this.#threads.length, queue.length);
    if (count === 0) return this.#rejectAll(queue, "no signing thread is running: the stopped ones are being replaced");
    const threads = this.#threads.length === 1 ? this.#threads : [...this.#threads].sort((a, b) => a.requests - b.requests);
    const share = Math.ceil(queue.length / count);
    for (let i = 0; i * share < queue.length; i++) this.#post(threads[i]!, queue.slice(i * share, (i + 1) * share));
  };

  #post(thread: Thread, requests: readonly Request[]): void {
    const n = requests.length;
    let total = 0;
    for (const request of requests) total += request.input.length;
    const inputs = new Uint8Array(total);
    const index = new Uint32Array(2 * n);
    let at = 0;
    for (let i = 0; i < n; i++) {
      const request = requests[i]!;
      inputs.set(request.input, at);
      at += request.input.length;
      index[i] = at;
      index[n + i] = request.slot;
    }
    const id = this.#nextBatch++;
    thread.batches.set(id, { requests, postedAt: performance.now() });
    if (thread.requests === 0) thread.worker.ref();
    thread.requests += n;
    thread.worker.postMessage({ kind: "batch", id, inputs: inputs.buffer, index }, [inputs.buffer, index.buffer]);
  }

  #answered(thread: Thread, answer: BatchAnswer): void {
    const posted = thread.batches.get(answer.id);
    if (posted === undefined) return;
    thread.batches.delete(answer.id);
    const { requests } = posted;
    thread.requests -= requests.length;
    if (thread.requests === 0) thread.worker.unref();
    this.#stopsInARow = 0;
    const results = Buffer.from(answer.results);
    for (let i = 0; i < requests.length; i++) {
      const at = i * RESULT_BYTES;
      requests[i]!.resolve({
        signature: results.toString("base64", at + 1, at + RESULT_BYTES),
        // INVARIANT (no unverified signature leaves): the thread's verification of this very signature.
        verified: results[at] === 1 ? VERIFIED : Promise.reject(selfVerificationFailed()),
      });
    }
    this.#onBatch?.((performance.now() - posted.postedAt) / 1000, requests.length);
  }

  #stopped(thread: Thread, code: number): void {
    const at = this.#threads.indexOf(thread);
    if (at >= 0) this.#threads.splice(at, 1);
    const held = [...thread.batches.values()].flatMap((posted) => posted.requests);
    thread.batches.clear();
    if (this.#closed) return this.#rejectAll(held, "the signing pool closed before these requests were signed");
    const why = thread.error ? `it failed: ${thread.error.message}` : `it exited with code ${code}`;
    this.#rejectAll(held, `the signing thread holding these requests stopped (${why}); it is being replaced`);
    this.#replaced += 1;
    this.#stopsInARow += 1;
    const delay = this.#stopsInARow < 2 ? 0 : Math.min(MAX_RESPAWN_DELAY_MS, RESPAWN_DELAY_MS * 2 ** (this.#stopsInARow - 2));
    this.#options.onThreadStopped?.(
      `signing thread ${thread.id} stopped (${why}) holding ${held.length} requests, answered 503; replaced${delay > 0 ? ` in ${delay} ms` : ""}`,
    );
    if (delay === 0) void this.#spawn();
    else if (this.#respawn === null) {
      this.#respawn = setTimeout(() => {
        this.#respawn = null;
        while (!this.#closed && this.#threads.length < this.#options.threads) void this.#spawn();
      }, delay);
      this.#respawn.unref();
    }
  }

  #rejectAll(requests: readonly Request[], message: string): void {
    if (requests.length === 0) return;
    const error = new SignerUnavailableError(message);
    for (const request of requests) request.reject(error);
  }
}
