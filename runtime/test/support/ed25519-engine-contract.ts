/**
 * What every `Ed25519Engine` must do (runtime/src/signing/engine.ts), as a suite any engine's test file runs:
 * node:crypto's signature byte for byte (Ed25519 is deterministic), a `verified` that resolves for it, and a
 * `KeyError` (never a resolved `verified`) for a private key whose public half is not `key.publicKey`.
 */
import { generateKeyPairSync, sign as nodeSign } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { KeyError } from "../../src/errors.js";
import type { Ed25519Engine } from "../../src/signing/engine.js";
import { generateSigningKeyPair, loadSigningKeyPem, type SigningKey } from "../../src/signing/keys.js";

/** Settles `verified` into a value, so a test can assert on a rejection it expects. */
async function outcome(engine: Ed25519Engine, input: Uint8Array, key: SigningKey): Promise<"verified" | KeyError | unknown> {
  try {
    const signed = await engine.sign(input, key);
    await signed.verified;
    return "verified";
  } catch (e) {
    return e;
  }
}

export function describeEd25519Engine(label: string, engine: () => Ed25519Engine): void {
  describe(`Ed25519 engine contract: ${label}`, () => {
    const key = loadSigningKeyPem(generateSigningKeyPair().privateKeyPem);

    it("signs exactly as node:crypto does, and its self-verification passes", async () => {
      await fc.assert(
        fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), async (input) => {
          const signed = await engine().sign(input, key);
          await expect(signed.verified).resolves.toBeUndefined();
          expect(signed.signature).toBe(nodeSign(null, input, key.privateKey).toString("base64"));
        }),
        { numRuns: 300 },
      );
    });

    it("never passes self-verification when the private key's public half is another key", async () => {
      const other = loadSigningKeyPem(generateSigningKeyPair().privateKeyPem);
      const mismatched: SigningKey = { keyId: key.keyId, privateKey: other.privateKey, publicKey: key.publicKey };
      const result = await outcome(engine(), new TextEncoder().encode("payload"), mismatched);
      expect(result).toBeInstanceOf(KeyError);
    });

    it("refuses a private key that is not Ed25519", async () => {
      const x25519 = generateKeyPairSync("x25519").privateKey;
      const wrong: SigningKey = { keyId: key.keyId, privateKey: x25519, publicKey: key.publicKey };
      expect(await outcome(engine(), new Uint8Array(8), wrong)).toBeInstanceOf(KeyError);
    });
  });
}
