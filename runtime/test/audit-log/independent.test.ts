/**
 * An independent verifier of conformance/vectors/audit-log.json, written from docs/audit.md ("Tamper evidence: the
 * audit log") and docs/signing.md alone, with none of writ's code: SHA-256 from @noble/hashes, Ed25519 from
 * @noble/ed25519 (strict RFC 8032), JCS from the `canonicalize` package. It checks leaf inputs and hashes, every
 * inclusion vector (RFC 9162 2.1.3.2), the checkpoints' signatures, frontiers and hash chain, and the inclusion proof
 * as the route answers it. If writ and this file disagree, the documentation is incomplete or one of them is wrong.
 */
import { readFileSync } from "node:fs";
import * as ed from "@noble/ed25519";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from "@noble/hashes/utils.js";
import canonicalize from "canonicalize";
import { describe, expect, it } from "vitest";

interface Checkpoint {
  logId: string;
  size: number;
  rootHash: string;
  timestamp: string;
  previous: string | null;
  frontier: string[];
  keyId: string;
  signature: string;
}

interface Vectors {
  payloadType: string;
  publicKey: string;
  entries: { position: number; kind: string; record: string; leafInput: string; leafHash: string }[];
  inclusion: {
    id: string;
    leafIndex: number;
    treeSize: number;
    leafHash: string;
    rootHash: string;
    auditPath: string[];
    expected: { valid: boolean };
  }[];
  checkpoints: { id: string; json: string; checkpointHash?: string; expected: { valid: boolean; errors?: string[] } }[];
  proofs: {
    id: string;
    type: string;
    json: string;
    entry?: { position: number; kind: string; record: string };
    expected: { valid: boolean };
  }[];
}

const vectors = JSON.parse(readFileSync(new URL("../../../conformance/vectors/audit-log.json", import.meta.url), "utf8")) as Vectors;

const jcs = (value: unknown): Uint8Array => {
  const text = canonicalize(value);
  if (text === undefined) throw new Error("not canonicalizable");
  return utf8ToBytes(text);
};
const entryLeafInput = (kind: string, record: string): Uint8Array =>
  concatBytes(utf8ToBytes(kind), new Uint8Array([0x0a]), utf8ToBytes(record));
const leafHash = (input: Uint8Array): Uint8Array => sha256(concatBytes(new Uint8Array([0]), input));
const nodeHash = (l: Uint8Array, r: Uint8Array): Uint8Array => sha256(concatBytes(new Uint8Array([1]), l, r));
const equal = (a: Uint8Array, b: Uint8Array): boolean => bytesToHex(a) === bytesToHex(b);

/** RFC 9162 2.1.3.2, step by step. */
function verifyInclusion(leaf: Uint8Array, index: number, size: number, path: Uint8Array[], root: Uint8Array): boolean {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of path) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equal(r, root);
}

/** The 32-byte key of an Ed25519 SPKI PEM: the DER is a fixed 12-byte prefix and the key. */
function rawKey(pem: string): Uint8Array {
  const der = Buffer.from(pem.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, ""), "base64");
  expect(bytesToHex(der.subarray(0, 12))).toBe("302a300506032b6570032100");
  return new Uint8Array(der.subarray(12));
}

const publicKey = rawKey(vectors.publicKey);
const keyId = bytesToHex(sha256(publicKey)).slice(0, 32);

/** PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body. */
function pae(type: string, body: Uint8Array): Uint8Array {
  const t = utf8ToBytes(type);
  return concatBytes(utf8ToBytes(`DSSEv1 ${t.length} `), t, utf8ToBytes(` ${body.length} `), body);
}

/** Whether the checkpoint is signed by the pinned key: keyId names it, Ed25519 over PAE(type, JCS(without signature)). */
async function signedByPinnedKey(c: Checkpoint): Promise<boolean> {
  if (c.keyId !== keyId || !/^[A-Za-z0-9+/]{86}==$/.test(c.signature)) return false;
  const { signature, ...unsigned } = c;
  return ed.verifyAsync(new Uint8Array(Buffer.from(signature, "base64")), pae(vectors.payloadType, jcs(unsigned)), publicKey, {
    zip215: false,
  });
}

/** The frontier folded from the right: root = node(f0, node(f1, ... f_last)); the empty frontier is SHA-256(""). */
function frontierRoot(c: Checkpoint): Uint8Array | null {
  let bits = 0;
  for (let n = c.size; n > 0; n = Math.floor(n / 2)) bits += n % 2;
  if (c.frontier.length !== bits) return null;
  if (bits === 0) return sha256(new Uint8Array(0));
  let root: Uint8Array = hexToBytes(c.frontier[bits - 1]!);
  for (let i = bits - 2; i >= 0; i--) root = nodeHash(hexToBytes(c.frontier[i]!), root);
  return root;
}

const checkpointHash = (c: Checkpoint): string => bytesToHex(sha256(jcs(c)));
const checkpointOf = (id: string): Checkpoint => JSON.parse(vectors.checkpoints.find((c) => c.id === id)?.json ?? "null") as Checkpoint;

describe("audit-log.json, verified without writ's code", () => {
  it("leaf inputs are the kind, a line feed and the record's UTF-8 bytes; leaf hashes SHA-256(0x00 || leaf input)", () => {
    for (const e of vectors.entries) {
      const input = entryLeafInput(e.kind, e.record);
      expect(new TextDecoder().decode(input)).toBe(e.leafInput);
      expect(bytesToHex(leafHash(input))).toBe(e.leafHash);
    }
  });

  it("every inclusion vector gives its expected result by RFC 9162 2.1.3.2", () => {
    expect(vectors.inclusion.length).toBeGreaterThan(28);
    for (const v of vectors.inclusion) {
      const got = verifyInclusion(
        hexToBytes(v.leafHash),
        v.leafIndex,
        v.treeSize,
        v.auditPath.map((h) => hexToBytes(h)),
        hexToBytes(v.rootHash),
      );
      expect(got, v.id).toBe(v.expected.valid);
    }
  });

  it("the valid checkpoints: signed by the pinned key, the frontier hashes to the root, chained by previous", async () => {
    const [first, second] = [checkpointOf("checkpoint-3"), checkpointOf("checkpoint-7")];
    for (const c of [first, second]) {
      expect(await signedByPinnedKey(c)).toBe(true);
      expect(bytesToHex(frontierRoot(c) ?? new Uint8Array(0))).toBe(c.rootHash);
    }
    expect(first.previous).toBeNull();
    expect(second.previous).toBe(checkpointHash(first));
    expect(checkpointHash(second)).toBe(vectors.checkpoints.find((c) => c.id === "checkpoint-7")?.checkpointHash);
    expect(checkpointOf("checkpoint-7-relinked").previous).not.toBe(checkpointHash(first));
  });

  it("the refused checkpoints fail the signature or the frontier check", async () => {
    for (const v of vectors.checkpoints) {
      const c = JSON.parse(v.json) as Checkpoint;
      const root = frontierRoot(c);
      const timeOk = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(c.timestamp);
      const ok = (await signedByPinnedKey(c)) && root !== null && bytesToHex(root) === c.rootHash && timeOk;
      expect(ok, v.id).toBe(v.expected.valid);
    }
  });

  it("the inclusion proof as the route answers it: the entry's leaf, the path, the signed checkpoint", async () => {
    for (const v of vectors.proofs.filter((p) => p.type === "inclusion")) {
      const p = JSON.parse(v.json) as {
        leafIndex: number;
        treeSize: number;
        leafHash: string;
        auditPath: string[];
        checkpoint: Checkpoint;
      };
      const entry = v.entry;
      const leafOk =
        entry === undefined ||
        (entry.position === p.leafIndex && bytesToHex(leafHash(entryLeafInput(entry.kind, entry.record))) === p.leafHash);
      const pathOk =
        p.treeSize === p.checkpoint.size &&
        verifyInclusion(
          hexToBytes(p.leafHash),
          p.leafIndex,
          p.treeSize,
          p.auditPath.map((h) => hexToBytes(h)),
          hexToBytes(p.checkpoint.rootHash),
        );
      expect(leafOk && pathOk && (await signedByPinnedKey(p.checkpoint)), v.id).toBe(v.expected.valid);
    }
  });
});
