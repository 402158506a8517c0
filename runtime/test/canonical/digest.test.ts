import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/canonical/digest.js";

describe("sha256Hex", () => {
  it("matches the FIPS 180-2 examples", () => {
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("hashes strings as UTF-8 and bytes as given", () => {
    expect(sha256Hex("€")).toBe(sha256Hex(new Uint8Array([0xe2, 0x82, 0xac])));
    expect(sha256Hex(new TextEncoder().encode("abc"))).toBe(sha256Hex("abc"));
    expect(sha256Hex("x")).toMatch(/^[0-9a-f]{64}$/);
  });
});
