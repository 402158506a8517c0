/**
 * Hashes of the audit log as JSON shows them: 64 lowercase hex digits for 32 bytes (docs/audit.md, "Tamper evidence:
 * the audit log"). Uppercase or any other length is refused, so every hash has one spelling.
 */
export const HASH_HEX_PATTERN = /^[0-9a-f]{64}$/;

/** Whether `value` is a hash in its one JSON spelling. */
export function isHashHex(value: unknown): value is string {
  return typeof value === "string" && HASH_HEX_PATTERN.test(value);
}

/** The lowercase hex spelling of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("hex");
}

/**
 * The 32 bytes of a hash spelled as 64 lowercase hex digits.
 * @throws RangeError when `hex` is not such a spelling
 */
export function hashFromHex(hex: string): Uint8Array {
  if (!isHashHex(hex)) throw new RangeError(`\`${String(hex).slice(0, 80)}\` is not a hash (64 lowercase hex digits)`);
  return new Uint8Array(Buffer.from(hex, "hex"));
}
