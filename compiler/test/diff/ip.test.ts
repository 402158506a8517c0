/**
 * `writ diff` on `ip` signals: addresses as points of the 128-bit space (IPv4 as IPv4-mapped IPv6), cut at every address
 * and range the conditions name, so `in_cidr`, `==`, `!=` and `in` are decided exactly, and a witness is an address the
 * runtime reads back into its region (issue 41).
 */
import fc from "fast-check";
import { cidrSpan, ipAddress } from "@writ/runtime";
import { describe, expect, it } from "vitest";
import { ipText } from "../../src/diff/ip-domain.js";
import { small } from "./support/versions.js";
import { diffOf, expectEnumerated } from "./support/enumerate.js";

const rule = (name: string, condition: string, verdict = "reject") => `rule ${name} when ${condition} ${verdict} "${name}"`;

describe("named examples", () => {
  it('`in_cidr ["10.0.0.0/8"]` against `["10.0.0.0/9"]`: one region, its witness in 10.128.0.0/9', () => {
    const { diff, pairs } = diffOf(
      small("  client_ip: ip", rule("r", 'client_ip in_cidr ["10.0.0.0/8"]')),
      small("  client_ip: ip", rule("r", 'client_ip in_cidr ["10.0.0.0/9"]')),
    );
    expect(pairs).toEqual(["r -> otherwise"]);
    expect(diff.undecided).toEqual([]);
    const address = ipAddress(diff.regions[0]!.witness.signals["client_ip"] as string)!;
    const span = cidrSpan("10.128.0.0/9")!;
    expect(address >= span.first && address <= span.last).toBe(true);
  });

  it("an IPv4 range written as its IPv4-mapped IPv6 range, and a list of its addresses' mapped forms, are the same", () => {
    const { diff } = diffOf(
      small("  client_ip?: ip", rule("r", 'client_ip in_cidr ["10.0.0.0/8"] or client_ip in ["1.2.3.4"]')),
      small("  client_ip?: ip", rule("r", 'client_ip in_cidr ["::ffff:10.0.0.0/104"] or client_ip == "::ffff:102:304"')),
    );
    expect(diff).toMatchObject({ result: "equivalent", regions: [], undecided: [] });
  });

  it("`not in_cidr` of an IPv6 range moved by one bit: the half it leaves, in IPv6", () => {
    const { diff, pairs } = diffOf(
      small("  client_ip: ip", rule("r", 'client_ip not in_cidr ["2001:db8::/32"]')),
      small("  client_ip: ip", rule("r", 'client_ip not in_cidr ["2001:db8::/33"]')),
    );
    expect(pairs).toEqual(["otherwise -> r"]);
    expect(diff.regions[0]!.witness.signals["client_ip"]).toBe("2001:db8:8000::");
  });
});

describe("against enumeration", () => {
  const ranges = [
    "10.0.0.0/8",
    "10.0.0.0/9",
    "10.128.0.0/9",
    "10.1.2.3/32",
    "0.0.0.0/0",
    "::/0",
    "::ffff:0:0/96",
    "::ffff:10.0.0.0/104",
    "2001:db8::/32",
    "2001:db8::/33",
    "::/1",
    "fe80::/10",
  ];
  const addresses = [
    "10.0.0.0",
    "10.255.255.255",
    "11.0.0.0",
    "10.128.0.0",
    "::ffff:10.1.2.3",
    "2001:db8::",
    "::",
    "::1",
    "0.0.0.0",
    "255.255.255.255",
  ];
  const list = (pool: readonly string[]) =>
    fc.uniqueArray(fc.constantFrom(...pool), { minLength: 1, maxLength: 3 }).map((xs) => JSON.stringify(xs).replaceAll(",", ", "));
  const condition = fc.oneof(
    list(ranges).map((l) => `client_ip in_cidr ${l}`),
    list(ranges).map((l) => `client_ip not in_cidr ${l}`),
    fc.constantFrom(...addresses).map((a) => `client_ip == "${a}"`),
    fc.constantFrom(...addresses).map((a) => `client_ip != "${a}"`),
    list(addresses).map((l) => `client_ip in ${l}`),
    list(addresses).map((l) => `client_ip not in ${l}`),
  );

  /** Every address a condition names, the first and last of each range, and the addresses beside them, in both forms. */
  function universe(): Record<string, unknown>[] {
    const points = new Set<bigint>([0n, (1n << 128n) - 1n]);
    for (const a of addresses) points.add(ipAddress(a)!);
    for (const r of ranges) [cidrSpan(r)!.first, cidrSpan(r)!.last].forEach((p) => points.add(p));
    const texts = new Set<string>();
    for (const p of points) {
      for (const q of [p - 1n, p, p + 1n]) {
        if (q < 0n || q >= 1n << 128n) continue;
        const text = ipText(q);
        texts.add(text);
        // An IPv4 address is also sent as its IPv4-mapped IPv6 text.
        if (!text.includes(":")) texts.add(`::ffff:${text}`);
      }
    }
    return [{}, ...[...texts].map((client_ip) => ({ client_ip }))];
  }

  it("on generated pairs, the regions are exactly the pairs the addresses at and beside every edge show", () => {
    const requests = universe();
    fc.assert(
      fc.property(fc.array(condition, { minLength: 4, maxLength: 4 }), ([a, b, c, d]) => {
        const rules = (p: string, q: string) => `${rule("p", p)}\n${rule("q", q, "escalate")}`;
        expectEnumerated(small("  client_ip?: ip", rules(a!, b!)), small("  client_ip?: ip", rules(c!, d!)), requests);
      }),
      { numRuns: 60, seed: 41 },
    );
  });
});

describe("witness text", () => {
  it("every address prints as text the runtime reads back to it", () => {
    const address = fc.bigInt({ min: 0n, max: (1n << 128n) - 1n });
    const mapped = fc.bigInt({ min: 0n, max: 0xffffffffn }).map((v) => (0xffffn << 32n) | v);
    const sparse = fc
      .array(fc.constantFrom(0, 0, 0, 1, 0xffff), { minLength: 8, maxLength: 8 })
      .map((gs) => gs.reduce((v, g) => (v << 16n) | BigInt(g), 0n));
    fc.assert(
      fc.property(fc.oneof(address, mapped, sparse), (n) => {
        expect(ipAddress(ipText(n))).toBe(n);
      }),
    );
  });
});
