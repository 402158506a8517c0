/** The libsodium functions writ calls (sodium-native ships no types; @types/sodium-native describes version 2). */
declare module "sodium-native" {
  export interface Sodium {
    readonly crypto_sign_BYTES: number;
    /** Writes the 64-byte signature of `message` into `signature`. */
    crypto_sign_detached(signature: Buffer, message: Uint8Array, secretKey: Buffer): void;
    crypto_sign_verify_detached(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean;
  }
  const sodium: Sodium;
  export default sodium;
}
