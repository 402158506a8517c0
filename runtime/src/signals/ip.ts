/**
 * IP addresses and CIDR ranges (docs/language.md "Networks"), hand-parsed into 128-bit bigints and spans rather than
 * with node:net, because the runtime also decides in browsers (the playground, the SDK's embedded authorizer), and
 * because `net.isIP` and `BlockList` accept forms (zone ids, IPv4 parts with leading zeros) writ refuses.
 *
 * Every address is a point of one 128-bit space: an IPv6 address is itself, an IPv4 address `a.b.c.d` is the
 * IPv4-mapped IPv6 address `::ffff:a.b.c.d` (RFC 4291 2.5.5.2), which is how a dual-stack socket reports an IPv4
 * client; so `10.0.0.0/8` contains `::ffff:10.1.2.3`, and `::ffff:0:0/96` every IPv4 address. One definition serves
 * the compiler (literals, E512) and the runtime (the schema's `format: ip`, VAL-014; `in_cidr`).
 */

const MAPPED_PREFIX = 0xffffn << 32n;
const IPV4_PART = /^(0|[1-9]\d{0,2})$/;
const IPV6_GROUP = /^[0-9A-Fa-f]{1,4}$/;

/** `a.b.c.d`, four decimal parts from 0 to 255 without leading zeros (`010` could be read as octal, so it is refused). */
function ipv4(s: string): bigint | null {
  const parts = s.split(".");
  if (parts.length !== 4) return null;
  let v = 0n;
  for (const p of parts) {
    if (!IPV4_PART.test(p) || Number(p) > 255) return null;
    v = (v << 8n) | BigInt(p);
  }
  return v;
}

/** RFC 4291 2.2 text: eight groups of 1 to 4 hex digits, one `::` for a run of zero groups, an IPv4 tail; no zone. */
function ipv6(s: string): bigint | null {
  const halves = s.split("::");
  if (halves.length > 2) return null;
  /** The groups of one side of `::`; an IPv4 tail only at the end of the address (`last`). */
  const groupsOf = (text: string, last: boolean): bigint[] | null => {
    if (text === "") return [];
    const parts = text.split(":");
    const out: bigint[] = [];
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (last && i === parts.length - 1 && p.includes(".")) {
        const v4 = ipv4(p);
        if (v4 === null) return null;
        out.push(v4 >> 16n, v4 & 0xffffn);
      } else if (IPV6_GROUP.test(p)) out.push(BigInt(`0x${p}`));
      else return null;
    }
    return out;
  };
  const head = groupsOf(halves[0]!, halves.length === 1);
  const tail = halves.length === 2 ? groupsOf(halves[1]!, true) : [];
  if (head === null || tail === null) return null;
  const given = head.length + tail.length;
  if (halves.length === 1 ? given !== 8 : given > 7) return null;
  const groups = [...head, ...Array<bigint>(8 - given).fill(0n), ...tail];
  return groups.reduce((v, g) => (v << 16n) | g, 0n);
}

/** The address as a point of the 128-bit space (IPv4 mapped), or null when `s` is not an address. */
export function ipAddress(s: string): bigint | null {
  if (s.includes(":")) return ipv6(s);
  const v4 = ipv4(s);
  return v4 === null ? null : MAPPED_PREFIX | v4;
}

export function isIpAddress(s: string): boolean {
  return ipAddress(s) !== null;
}

/** A CIDR range as the span of the 128-bit space it covers, both ends inclusive. */
export interface IpSpan {
  readonly first: bigint;
  readonly last: bigint;
}

const PREFIX = /^(0|[1-9]\d{0,2})$/;

/**
 * `ADDRESS/PREFIX`, with no bits set after the prefix (`10.0.0.1/8` is refused: `10.0.0.0/8` is what it would mean),
 * or null when `s` is not one. An IPv4 range's prefix counts from the mapped space's 96 bits.
 */
export function cidrSpan(s: string): IpSpan | null {
  const slash = s.indexOf("/");
  if (slash === -1) return null;
  const [text, prefixText] = [s.slice(0, slash), s.slice(slash + 1)];
  if (!PREFIX.test(prefixText)) return null;
  const v6 = text.includes(":");
  const prefix = Number(prefixText) + (v6 ? 0 : 96);
  const base = ipAddress(text);
  if (base === null || prefix > 128) return null;
  const hostBits = (1n << BigInt(128 - prefix)) - 1n;
  if ((base & hostBits) !== 0n) return null;
  return { first: base, last: base | hostBits };
}

export function isCidr(s: string): boolean {
  return cidrSpan(s) !== null;
}

/** Whether a span holds the address. */
export function spanHolds(span: IpSpan, address: bigint): boolean {
  return address >= span.first && address <= span.last;
}
