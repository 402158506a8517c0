/**
 * What every `Ed25519Engine` must do (runtime/src/signing/engine.ts), as a suite any engine's test file runs:
 * node:crypto's signature byte for byte (Ed25519 is deterministic), a `verified` that resolves for it, and a
 * `KeyError` (never a resolved `verified`) for a private key whose public half is not `key.publicKey`; a `verify` that
 * accepts node:crypto's signatures and nothing node:crypto refuses.
 */
import { generateKeyPairSync, sign as nodeSign, verify as nodeVerify } from "node:crypto";
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

    it("verifies what node:crypto verifies, and refuses a changed input, signature or key, never throwing", () => {
      const other = loadSigningKeyPem(generateSigningKeyPair().privateKeyPem);
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 1024 }), fc.nat(), fc.nat(7), (input, at, bit) => {
          const signature = new Uint8Array(nodeSign(null, input, key.privateKey));
          expect(engine().verify(input, signature, key.publicKey)).toBe(true);
          const changed = signature.slice();
          changed[at % 64]! ^= 1 << bit;
          expect(engine().verify(input, changed, key.publicKey)).toBe(false);
          if (input.length > 0) {
            const changedInput = input.slice();
            changedInput[at % input.length]! ^= 1 << bit;
            expect(engine().verify(changedInput, signature, key.publicKey)).toBe(false);
          }
          expect(engine().verify(input, signature, other.publicKey)).toBe(false);
          expect(engine().verify(input, signature.subarray(0, 63), key.publicKey)).toBe(false);
          expect(engine().verify(input, new Uint8Array(65), key.publicKey)).toBe(false);
        }),
        { numRuns: 200 },
      );
    });

    it("never accepts what node:crypto refuses, on arbitrary signatures", () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 64 }), fc.uint8Array({ minLength: 64, maxLength: 64 }), (input, signature) => {
          if (!nodeVerify(null, input, key.publicKey.key, signature)) expect(engine().verify(input, signature, key.publicKey)).toBe(false);
        }),
        { numRuns: 300 },
      );
    });

    it("refuses a private key that is not Ed25519", async () => {
      const x25519 = generateKeyPairSync("x25519").privateKey;
      const wrong: SigningKey = { keyId: key.keyId, privateKey: x25519, publicKey: key.publicKey };
      expect(await outcome(engine(), new Uint8Array(8), wrong)).toBeInstanceOf(KeyError);
    });
  });
}
