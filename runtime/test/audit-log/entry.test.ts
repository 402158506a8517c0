import { describe, expect, it } from "vitest";
import { CanonicalizationError, LOG_ENTRY_KINDS, entryLeafHash, entryLeafInput, leafHash, toHex, type LogEntry } from "../../src/index.js";

const text = (b: Uint8Array): string => new TextDecoder().decode(b);

describe("entryLeafInput", () => {
  it("is UTF-8 of the JCS of {kind, position, record}, the record text kept as one string", () => {
    const entry: LogEntry = { position: 3, kind: "decision", record: '{"b":1, "a":"é\\u00e9"}' };
    expect(text(entryLeafInput(entry))).toBe('{"kind":"decision","position":3,"record":"{\\"b\\":1, \\"a\\":\\"é\\\\u00e9\\"}"}');
    expect(Buffer.from(entryLeafInput({ position: 0, kind: "prune", record: "é" })).toString("hex")).toBe(
      Buffer.from('{"kind":"prune","position":0,"record":"é"}', "utf8").toString("hex"),
    );
    expect(toHex(entryLeafHash(entry))).toBe(toHex(leafHash(entryLeafInput(entry))));
  });

  it("binds the record to its position and kind, and covers its text byte for byte", () => {
    const entry: LogEntry = { position: 7, kind: "override", record: '{"a":1}' };
    const base = toHex(entryLeafHash(entry));
    expect(toHex(entryLeafHash({ ...entry, position: 8 }))).not.toBe(base);
    expect(toHex(entryLeafHash({ ...entry, kind: "decision" }))).not.toBe(base);
    expect(toHex(entryLeafHash({ ...entry, record: '{"a": 1}' }))).not.toBe(base);
  });

  it("knows the six kinds and refuses anything else", () => {
    expect(LOG_ENTRY_KINDS).toEqual(["decision", "override", "confirmation", "verification", "security", "prune"]);
    const entry: LogEntry = { position: 0, kind: "security", record: "{}" };
    expect(() => entryLeafInput({ ...entry, kind: "other" as LogEntry["kind"] })).toThrow(
      "log entry kind `other` is not one of decision, override, confirmation, verification, security, prune",
    );
    expect(() => entryLeafInput({ ...entry, position: -1 })).toThrow("log entry position `-1` is not a non-negative safe integer");
    expect(() => entryLeafInput({ ...entry, position: 2 ** 53 })).toThrow(RangeError);
    expect(() => entryLeafInput({ ...entry, record: { a: 1 } as unknown as string })).toThrow("log entry record is not a string");
    expect(() => entryLeafInput({ ...entry, record: "\ud800" })).toThrow(CanonicalizationError);
  });
});
