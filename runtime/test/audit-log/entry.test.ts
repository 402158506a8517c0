import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LOG_ENTRY_KINDS, entryLeafHash, entryLeafInput, leafHash, toHex, type LogEntryKind, type LogRecord } from "../../src/index.js";

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

describe("entryLeafInput", () => {
  it("is UTF-8 of the kind, a line feed, then the record's bytes exactly as stored", () => {
    const record = '{"b":1, "a":"é\\u00e9"}';
    expect(hex(entryLeafInput({ kind: "decision", record }))).toBe(Buffer.from(`decision\n${record}`, "utf8").toString("hex"));
    expect(hex(entryLeafInput({ kind: "prune", record: "é" }))).toBe("7072756e650ac3a9");
  });

  it("hashes a record given as text and as its UTF-8 bytes alike, and entryLeafHash is leafHash of the input", () => {
    fc.assert(
      fc.property(fc.constantFrom(...LOG_ENTRY_KINDS), fc.string({ unit: "grapheme" }), (kind, record) => {
        const bytes = Buffer.from(record, "utf8");
        const expected = createHash("sha256")
          .update(Buffer.concat([Buffer.from([0]), Buffer.from(`${kind}\n`), bytes]))
          .digest("hex");
        expect(toHex(entryLeafHash({ kind, record }))).toBe(expected);
        expect(toHex(entryLeafHash({ kind, record: bytes }))).toBe(expected);
        expect(toHex(leafHash(entryLeafInput({ kind, record })))).toBe(expected);
      }),
    );
  });

  it("binds the record to its kind and covers its text byte for byte", () => {
    const entry: LogRecord = { kind: "override", record: '{"a":1}' };
    const base = toHex(entryLeafHash(entry));
    expect(toHex(entryLeafHash({ ...entry, kind: "decision" }))).not.toBe(base);
    expect(toHex(entryLeafHash({ ...entry, record: '{"a": 1}' }))).not.toBe(base);
    expect(toHex(entryLeafHash({ ...entry, record: '{"a":1} ' }))).not.toBe(base);
  });

  it("knows the six kinds and refuses anything else", () => {
    expect(LOG_ENTRY_KINDS).toEqual(["decision", "override", "confirmation", "verification", "security", "prune"]);
    const entry: LogRecord = { kind: "security", record: "{}" };
    const other = { ...entry, kind: "other" as LogEntryKind };
    expect(() => entryLeafInput(other)).toThrow(
      "log entry kind `other` is not one of decision, override, confirmation, verification, security, prune",
    );
    expect(() => entryLeafHash(other)).toThrow(RangeError);
    expect(() => entryLeafInput({ ...entry, record: { a: 1 } as unknown as string })).toThrow(
      "log entry record is not its stored JSON text",
    );
    expect(() => entryLeafHash({ ...entry, record: 5 as unknown as string })).toThrow(TypeError);
  });
});
