import { execFile } from "node:child_process";
import { sign as nodeSign } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { SignerUnavailableError, generateSigningKeyPair, loadSigningKeyPem, type SigningKey } from "@writ/runtime";
import { afterAll, describe, expect, it } from "vitest";
import { describeEd25519Engine } from "../../../runtime/test/support/ed25519-engine-contract.js";
import { SigningPool, type SigningPoolOptions } from "../../src/signing/pool.js";
import { loadSodiumEngine } from "../../src/sodium-engine.js";

const sodium = loadSodiumEngine();
if (sodium.engine === null) throw new Error(`sodium-native does not load: ${sodium.reason}`);
const inline = sodium.engine;
const CRASHING = new URL("./crashing-thread.ts", import.meta.url);
const key = loadSigningKeyPem(generateSigningKeyPair().privateKeyPem);
const bytes = (text: string) => new TextEncoder().encode(text);
const nodeSignature = (input: Uint8Array, k: SigningKey = key) => nodeSign(null, input, k.privateKey).toString("base64");

const pools: SigningPool[] = [];
async function started(options: Omit<SigningPoolOptions, "inline">): Promise<SigningPool> {
  const pool = await SigningPool.start({ inline, ...options });
  pools.push(pool);
  return pool;
}
afterAll(() => Promise.all(pools.map((pool) => pool.close())));

const contractPool = await started({ threads: 2 });
describeEd25519Engine("libsodium on 2 signing threads", () => contractPool);

/** Settles every promise: its signature once verified, or its error. */
async function outcomes(signing: readonly Promise<{ signature: string; verified: Promise<void> }>[]): Promise<(string | Error)[]> {
  return Promise.all(
    signing.map(async (p) => {
      try {
        const signed = await p;
        await signed.verified;
        return signed.signature;
      } catch (e) {
        return e as Error;
      }
    }),
  );
}

describe("signing pool: batches", () => {
  it("posts the requests of one turn of the event loop as one batch per thread, shared out, each signed as node:crypto signs", async () => {
    const pool = await started({ threads: 2, keys: [key] });
    const batches: number[] = [];
    pool.observeBatches((seconds, requests) => {
      expect(seconds).toBeGreaterThan(0);
      batches.push(requests);
    });
    const inputs = Array.from({ length: 51 }, (_, i) => bytes(`request ${i} `.repeat(i)));
    const signing = inputs.map((input) => pool.sign(input, key));
    expect(pool.stats()).toMatchObject({ threads: 2, running: 2, queued: 51, signing: 0 });
    expect(await outcomes(signing)).toEqual(inputs.map((input) => nodeSignature(input)));
    expect(batches.sort()).toEqual([25, 26]);
    // A later turn is a batch of its own.
    expect(await outcomes([pool.sign(bytes("later"), key)])).toEqual([nodeSignature(bytes("later"))]);
    expect(batches).toHaveLength(3);
    expect(pool.stats()).toMatchObject({ queued: 0, signing: 0, replaced: 0 });
  });

  it("signs with a key first given with a request as with the keys given at the start, each with its own", async () => {
    const pool = await started({ threads: 1, keys: [key] });
    const other = loadSigningKeyPem(generateSigningKeyPair().privateKeyPem);
    const [mine, theirs] = await outcomes([pool.sign(bytes("a"), key), pool.sign(bytes("a"), other)]);
    expect(mine).toBe(nodeSignature(bytes("a")));
    expect(theirs).toBe(nodeSignature(bytes("a"), other));
  });
});

describe("signing pool: a thread that stops", () => {
  for (const [fault, cue] of [
    ["exits", "crash-exit"],
    ["throws", "crash-throw"],
  ] as const) {
    it(`rejects every request of the batch in hand when its thread ${fault}, with SignerUnavailableError, and the replacement signs the next`, async () => {
      const stops: string[] = [];
      const pool = await started({ threads: 1, keys: [key], script: CRASHING, onThreadStopped: (m) => stops.push(m) });
      const held = await outcomes([pool.sign(bytes("first"), key), pool.sign(bytes(`a ${cue} here`), key), pool.sign(bytes("third"), key)]);
      for (const outcome of held) {
        expect(outcome).toBeInstanceOf(SignerUnavailableError);
        expect((outcome as SignerUnavailableError).code).toBe("SIGNER_UNAVAILABLE");
      }
      expect(stops).toHaveLength(1);
      expect(stops[0]).toMatch(fault === "exits" ? /exited with code 3\) holding 3 requests/ : /failed: a signing thread's fault, on cue/);
      expect(await outcomes([pool.sign(bytes("after"), key)])).toEqual([nodeSignature(bytes("after"))]);
      expect(pool.stats()).toMatchObject({ running: 1, replaced: 1, signing: 0 });
    });
  }

  it("loses only the stopped thread's batch: the other thread's requests of the same turn are signed", async () => {
    const pool = await started({ threads: 2, keys: [key], script: CRASHING, onThreadStopped: () => {} });
    const inputs = [bytes("one"), bytes("two crash-exit"), bytes("three"), bytes("four")];
    const [one, two, three, four] = await outcomes(inputs.map((input) => pool.sign(input, key)));
    // Two a thread: the first two went to one thread, which stopped; the last two were signed.
    expect(one).toBeInstanceOf(SignerUnavailableError);
    expect(two).toBeInstanceOf(SignerUnavailableError);
    expect([three, four]).toEqual([nodeSignature(inputs[2]!), nodeSignature(inputs[3]!)]);
  });

  it("backs off a replacement that keeps stopping, and answers 503 at once while no thread runs", async () => {
    const stops: string[] = [];
    const pool = await started({ threads: 1, keys: [key], script: CRASHING, onThreadStopped: (m) => stops.push(m) });
    await outcomes([pool.sign(bytes("crash-exit"), key)]);
    await outcomes([pool.sign(bytes("crash-exit"), key)]);
    expect(stops[1]).toMatch(/replaced in 100 ms$/);
    const [meanwhile] = await outcomes([pool.sign(bytes("meanwhile"), key)]);
    expect(meanwhile).toBeInstanceOf(SignerUnavailableError);
    expect((meanwhile as Error).message).toMatch(/no signing thread is running/);
    await expect.poll(() => pool.stats().running, { timeout: 5_000 }).toBe(1);
    expect(await outcomes([pool.sign(bytes("after"), key)])).toEqual([nodeSignature(bytes("after"))]);
  });
});

describe("signing pool: start", () => {
  it("refuses to start when a thread cannot, saying why", async () => {
    const missing = new URL("./no-such-thread.js", import.meta.url);
    await expect(SigningPool.start({ inline, threads: 2, keys: [key], script: missing, onThreadStopped: () => {} })).rejects.toThrow(
      /^a signing thread did not start: .*no-such-thread\.js/,
    );
  });
});

describe("signing pool: shutdown", () => {
  it("close() stops every thread; requests in hand and later ones reject with SignerUnavailableError", async () => {
    const pool = await started({ threads: 2, keys: [key] });
    const inHand = outcomes([pool.sign(bytes("in hand"), key)]);
    await pool.close();
    expect(pool.stats().running).toBe(0);
    expect([...(await inHand), ...(await outcomes([pool.sign(bytes("later"), key)]))]).toEqual([
      expect.any(SignerUnavailableError),
      expect.any(SignerUnavailableError),
    ]);
  });

  it("does not keep a process alive once its threads are idle: a program that never closes it exits", async () => {
    const program = `
      import { generateSigningKeyPair, loadSigningKeyPem } from "@writ/runtime";
      import { SigningPool } from ${JSON.stringify(fileURLToPath(new URL("../../src/signing/pool.ts", import.meta.url)))};
      import { loadSodiumEngine } from ${JSON.stringify(fileURLToPath(new URL("../../src/sodium-engine.ts", import.meta.url)))};
      const key = loadSigningKeyPem(generateSigningKeyPair().privateKeyPem);
      const pool = await SigningPool.start({ threads: 2, inline: loadSodiumEngine().engine, keys: [key] });
      const signed = await pool.sign(new Uint8Array(8), key);
      await signed.verified;
      console.log("signed");
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "--input-type=module", "-e", program], {
      cwd: fileURLToPath(new URL("../../", import.meta.url)),
      timeout: 30_000,
    });
    expect(stdout.trim()).toBe("signed");
  });
});
