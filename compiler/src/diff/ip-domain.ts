import { ipAddress, type IpSpan } from "@writ/runtime";

/**
 * Addresses as `writ diff` reads them: points of the 128-bit space the runtime parses every address into (ip.ts in the
 * runtime, an IPv4 address as its IPv4-mapped IPv6 one), cut at the ends of every address and range a condition names
 * into intervals on which each of those conditions is constant. Each interval is stood for by one address in it, as
 * text the runtime parses back to it: an IPv4 address where the interval holds one, since a client's is most often.
 */
const SPACE_END = 1n << 128n;
const MAPPED_FIRST = 0xffffn << 32n;
const MAPPED_LAST = MAPPED_FIRST | 0xffffffffn;

/** One address of each interval the addresses `points` and the ranges `spans` cut the space into, in order. */
export function ipCells(points: readonly bigint[], spans: readonly IpSpan[]): string[] {
  const cuts = new Set<bigint>([0n, SPACE_END]);
  for (const p of points) [p, p + 1n].forEach((c) => cuts.add(c));
  for (const s of spans) [s.first, s.last + 1n].forEach((c) => cuts.add(c));
  const sorted = [...cuts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return sorted.slice(0, -1).map((first, i) => {
    const last = sorted[i + 1]! - 1n;
    const v4 = first <= MAPPED_LAST && last >= MAPPED_FIRST;
    return ipText(v4 && first < MAPPED_FIRST ? MAPPED_FIRST : first);
  });
}

/** An address as text the runtime reads back as `n`: dotted IPv4 for a mapped one, else RFC 5952's IPv6 form. */
export function ipText(n: bigint): string {
  const text = n >= MAPPED_FIRST && n <= MAPPED_LAST ? dotted(n & 0xffffffffn) : colons(n);
  if (ipAddress(text) !== n) throw new Error(`internal: ${text} does not read back as the address ${n}`);
  return text;
}

function dotted(v4: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((v4 >> shift) & 0xffn)).join(".");
}

/** Eight groups in hex, the longest run of two or more zero groups (the first of equals) written `::`. */
function colons(n: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(112 - 16 * i)) & 0xffffn));
  let [start, length] = [-1, 1];
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > length) [start, length] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = (gs: number[]): string => gs.map((g) => g.toString(16)).join(":");
  return start < 0 ? hex(groups) : `${hex(groups.slice(0, start))}::${hex(groups.slice(start + length))}`;
}
