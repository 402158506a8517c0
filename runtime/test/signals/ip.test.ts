/**
 * Addresses and CIDR ranges (runtime/src/signals/ip.ts) against node:net: what `isIP` accepts (zones aside, which writ
 * refuses) is an address, and a range holds an address exactly when a BlockList of that subnet matches it, IPv4-mapped
 * IPv6 addresses and ranges included.
 */
import { BlockList, isIP } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cidrSpan, ipAddress, isCidr, isIpAddress } from "../../src/index.js";

const family = (a: string) => (isIP(a) === 6 ? "ipv6" : "ipv4");
const v4 = fc.ipV4();
const v6 = fc.ipV6().filter((a) => !a.includes("%"));
const address = fc.oneof(
  v4,
  v6,
  v4.map((a) => `::ffff:${a}`),
);
/** A range around an address: its prefix, with the host bits cleared (writ refuses a range with them set). */
const range = fc.tuple(address, fc.integer({ min: 0, max: 128 })).map(([a, bits]) => {
  const v6range = a.includes(":");
  const prefix = v6range ? bits : bits % 33;
  const point = ipAddress(a)!;
  const total = v6range ? prefix : prefix + 96;
  const base = point & ~((1n << BigInt(128 - total)) - 1n);
  return { text: `${hexText(base, v6range)}/${prefix}`, prefix, v6range };
});

function hexText(v: bigint, v6: boolean): string {
  if (!v6) return [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 0xffn)).join(".");
  return Array.from({ length: 8 }, (_, i) => ((v >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(":");
}

describe("IP addresses", () => {
  it("are what node:net's isIP accepts, without a zone", () => {
    fc.assert(
      fc.property(
        fc.oneof(address, fc.string(), fc.constantFrom("010.0.0.1", "1.2.3", "::ffff:1.2.3.4", "1::2::3", "1.2.3.4::", "fe80::1%eth0")),
        (s) => {
          expect(isIpAddress(s)).toBe(isIP(s) !== 0 && !s.includes("%"));
        },
      ),
      { numRuns: 20_000 },
    );
  });

  it("one address in any spelling is one point; an IPv4 address is its mapped IPv6 address", () => {
    expect(ipAddress("2001:DB8:0:0:1::5")).toBe(ipAddress("2001:db8::1:0:0:5"));
    expect(ipAddress("10.1.2.3")).toBe(ipAddress("::ffff:10.1.2.3"));
    expect(ipAddress("10.1.2.3")).toBe(ipAddress("::ffff:a01:203"));
    expect(ipAddress("::10.1.2.3")).not.toBe(ipAddress("10.1.2.3")); // IPv4-compatible, deprecated: not the IPv4 address
  });
});

describe("CIDR ranges", () => {
  it("hold an address exactly when node:net's BlockList of the subnet matches it", () => {
    fc.assert(
      fc.property(range, address, ({ text }, a) => {
        const [base, prefix] = text.split("/") as [string, string];
        const list = new BlockList();
        list.addSubnet(base, Number(prefix), family(base));
        const span = cidrSpan(text)!;
        const point = ipAddress(a)!;
        expect(point >= span.first && point <= span.last).toBe(list.check(a, family(a)));
      }),
      { numRuns: 20_000 },
    );
  });

  it.each([
    ["10.0.0.1/8", "host bits set"],
    ["10.0.0.0/33", "an IPv4 prefix beyond 32"],
    ["2001:db8::/129", "an IPv6 prefix beyond 128"],
    ["10.0.0.0/08", "a prefix with a leading zero"],
    ["10.0.0.0", "no prefix"],
    ["10.0.0.0/", "an empty prefix"],
    ["fe80::%eth0/64", "a zone"],
  ])("%s is not a range: %s", (text) => {
    expect(isCidr(text)).toBe(false);
  });

  it("0.0.0.0/0 is every IPv4 address and no other; ::/0 is every address", () => {
    expect(cidrSpan("0.0.0.0/0")).toEqual(cidrSpan("::ffff:0:0/96"));
    expect(cidrSpan("::/0")).toEqual({ first: 0n, last: (1n << 128n) - 1n });
  });
});
