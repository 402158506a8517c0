/**
 * RFC 9162 section 2.1 written out as the RFC states it, recursively, with SHA-256 from node:crypto's one-shot
 * `hash`: the oracle the iterative implementation in runtime/src/audit-log/merkle.ts is compared with.
 */
import { hash } from "node:crypto";

const sha256 = (...parts: Uint8Array[]): Uint8Array => new Uint8Array(hash("sha256", Buffer.concat(parts), "buffer"));

export const refLeaf = (input: Uint8Array): Uint8Array => sha256(new Uint8Array([0]), input);
const refNode = (l: Uint8Array, r: Uint8Array): Uint8Array => sha256(new Uint8Array([1]), l, r);

function k(n: number): number {
  let p = 1;
  while (p * 2 < n) p *= 2;
  return p;
}

/** MTH(D[n]) over leaf hashes. */
export function refMth(d: readonly Uint8Array[]): Uint8Array {
  if (d.length === 0) return sha256();
  if (d.length === 1) return d[0]!;
  const split = k(d.length);
  return refNode(refMth(d.slice(0, split)), refMth(d.slice(split)));
}

/** PATH(m, D[n]). */
export function refPath(m: number, d: readonly Uint8Array[]): Uint8Array[] {
  if (d.length <= 1) return [];
  const split = k(d.length);
  return m < split
    ? [...refPath(m, d.slice(0, split)), refMth(d.slice(split))]
    : [...refPath(m - split, d.slice(split)), refMth(d.slice(0, split))];
}

function subproof(m: number, d: readonly Uint8Array[], b: boolean): Uint8Array[] {
  if (m === d.length) return b ? [] : [refMth(d)];
  const split = k(d.length);
  return m <= split
    ? [...subproof(m, d.slice(0, split), b), refMth(d.slice(split))]
    : [...subproof(m - split, d.slice(split), false), refMth(d.slice(0, split))];
}

/** PROOF(m, D[n]), 0 < m < n. */
export function refProof(m: number, d: readonly Uint8Array[]): Uint8Array[] {
  return subproof(m, d, true);
}

/** `count` distinct leaf hashes. */
export function leavesOf(count: number, salt = "leaf"): Uint8Array[] {
  return Array.from({ length: count }, (_, i) => refLeaf(new TextEncoder().encode(`${salt}-${i}`)));
}
