/**
 * A signing thread of the pool (pool.ts): libsodium's Ed25519 with the secret keys it was given once, at its start
 * (`workerData.keys`) or by one `key` message for a key first used later, never per request. A batch carries its
 * inputs in one transferred buffer with where each ends; the answer is one transferred buffer of RESULT_BYTES a
 * request: the self-verification's verdict (1: passed), then the 64 signature bytes. Anything that throws while one
 * request is signed gives it verdict 0: it fails closed on the main thread.
 */
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";
import type { Sodium } from "sodium-native";
import {
  PUBLIC_KEY_OFFSET,
  READY,
  RESULT_BYTES,
  type BatchAnswer,
  type ThreadData,
  type ThreadKey,
  type ToSigningThread,
} from "./protocol.js";

const sodium = createRequire(import.meta.url)("sodium-native") as Sodium;
/** libsodium's secret key (seed and public key) and the public key, by the pool's slot number. */
const keys = new Map<number, { readonly secret: Buffer; readonly publicKey: Buffer }>();

function learn(key: ThreadKey): void {
  const secret = Buffer.from(key.secret);
  keys.set(key.slot, { secret, publicKey: secret.subarray(PUBLIC_KEY_OFFSET) });
}

for (const key of (workerData as ThreadData).keys) learn(key);

function signInto(results: Buffer, at: number, input: Uint8Array, slot: number): void {
  const key = keys.get(slot);
  if (key === undefined) return;
  const signature = results.subarray(at + 1, at + RESULT_BYTES);
  sodium.crypto_sign_detached(signature, input, key.secret);
  results[at] = sodium.crypto_sign_verify_detached(signature, input, key.publicKey) ? 1 : 0;
}

parentPort!.on("message", (message: ToSigningThread) => {
  if (message.kind === "key") return learn(message);
  const { id, inputs, index } = message;
  const bytes = new Uint8Array(inputs);
  const count = index.length / 2;
  const results = Buffer.alloc(count * RESULT_BYTES);
  let start = 0;
  for (let i = 0; i < count; i++) {
    try {
      signInto(results, i * RESULT_BYTES, bytes.subarray(start, index[i]), index[count + i]!);
    } catch {
      results[i * RESULT_BYTES] = 0;
    }
    start = index[i]!;
  }
  const answer: BatchAnswer = { id, results: results.buffer };
  parentPort!.postMessage(answer, [results.buffer]);
});
parentPort!.postMessage(READY);
