/**
 * Attestation signing on a second core: a worker thread that holds the signing key and signs and self-verifies
 * batches of signing inputs, so the event loop keeps parsing, validating and answering while the curve operations
 * (about 170 µs of the 300 µs a signed decision costs) run beside it. docs/sidecar.md ("Using both cores") has the
 * measurements behind the choice.
 *
 * - A request alone (no other being handled, no signature in flight) signs on the calling thread: it gains nothing
 *   from a thread hop and would pay its latency. Under load every signature goes to the worker; signing inline
 *   then would stall the event loop for the 170 µs of every request that found the worker momentarily idle.
 * - Queued inputs are sent as one batch per event-loop turn: one message per batch, not per signature.
 * - INVARIANT (self-verify, spec 2.2): the worker verifies every signature against the public key before it answers,
 *   and the answer is checked again here (64 bytes, verified); nothing unverified is returned.
 */
import { Worker } from "node:worker_threads";
import { KeyError, canonicalSigningInput, signCanonical, signCanonicalAsync, type CanonicalSigner, type PayloadType, type SigningKey } from "@writ/runtime";

/**
 * The worker's whole program. Plain CommonJS run with `eval`: it needs node:crypto alone, and so runs the same from
 * the TypeScript sources (tests) and the built package.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { sign, verify } = require("node:crypto");
const { privateKey, publicKey } = workerData;
parentPort.on("message", ({ batch, inputs }) => {
  const signatures = [];
  const verified = [];
  for (const input of inputs) {
    const signature = sign(null, input, privateKey);
    signatures.push(signature);
    verified.push(signature.length === 64 && verify(null, input, publicKey, signature));
  }
  parentPort.postMessage({ batch, signatures, verified });
});
`;

interface Job {
  readonly input: Uint8Array;
  readonly resolve: (signature: string) => void;
  readonly reject: (error: unknown) => void;
}

interface BatchResult {
  readonly batch: number;
  readonly signatures: readonly Uint8Array[];
  readonly verified: readonly boolean[];
}

export class SigningWorker {
  readonly #key: SigningKey;
  readonly #worker: Worker;
  readonly #batches = new Map<number, readonly Job[]>();
  #queue: Job[] = [];
  #nextBatch = 0;
  #inFlight = 0;
  #failure: Error | null = null;

  readonly #busy: () => boolean;

  /** @param busy whether other requests are being handled (then nothing is signed inline) */
  constructor(key: SigningKey, busy: () => boolean) {
    this.#key = key;
    this.#busy = busy;
    // KeyObjects are cloned into the worker; the key material never leaves the process.
    this.#worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { privateKey: key.privateKey, publicKey: key.publicKey.key } });
    this.#worker.on("message", (result: BatchResult) => this.#settle(result));
    this.#worker.on("error", (error) => this.#fail(error));
    this.#worker.on("exit", (code) => this.#fail(new Error(`signing worker exited with code ${code}`)));
    // Pending work keeps the process alive through its promises; an idle worker must not.
    this.#worker.unref();
  }

  /** A {@link CanonicalSigner} for the authorizer (`AuthorizerOptions.signCanonical`). */
  readonly sign: CanonicalSigner = (payloadType: PayloadType, canonicalText: string, key: SigningKey) => {
    // Another key (not expected in the sidecar) or a dead worker: node's thread pool signs instead.
    if (key !== this.#key || this.#failure !== null) return signCanonicalAsync(payloadType, canonicalText, key);
    if (this.#inFlight === 0 && !this.#busy()) {
      try {
        return Promise.resolve(signCanonical(payloadType, canonicalText, key));
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    }
    return new Promise<string>((resolve, reject) => {
      if (this.#queue.length === 0) setImmediate(() => this.#send());
      this.#queue.push({ input: canonicalSigningInput(payloadType, canonicalText), resolve, reject });
      this.#inFlight += 1;
    });
  };

  /** Stops the worker; queued and in-flight signatures fail. */
  async close(): Promise<void> {
    this.#fail(new Error("signing worker closed"));
    await this.#worker.terminate();
  }

  #send(): void {
    const jobs = this.#queue;
    this.#queue = [];
    if (jobs.length === 0) return;
    const batch = this.#nextBatch++;
    this.#batches.set(batch, jobs);
    this.#worker.ref();
    this.#worker.postMessage({ batch, inputs: jobs.map((j) => j.input) });
  }

  #settle({ batch, signatures, verified }: BatchResult): void {
    const jobs = this.#batches.get(batch);
    if (!jobs) return;
    this.#batches.delete(batch);
    jobs.forEach((job, i) => {
      const signature = signatures[i];
      if (signature?.length === 64 && verified[i] === true) job.resolve(Buffer.from(signature.buffer, signature.byteOffset, 64).toString("base64"));
      else job.reject(new KeyError("signature failed self-verification: private and public key do not match"));
    });
    this.#inFlight -= jobs.length;
    if (this.#batches.size === 0 && this.#queue.length === 0) this.#worker.unref();
  }

  #fail(error: Error): void {
    if (this.#failure !== null) return;
    this.#failure = error;
    for (const jobs of [...this.#batches.values(), this.#queue]) for (const job of jobs) job.reject(error);
    this.#batches.clear();
    this.#queue = [];
    this.#inFlight = 0;
  }
}
