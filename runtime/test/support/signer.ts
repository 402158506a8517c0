import { createPrivateKey } from "node:crypto";
import { loadSigningKeyPem, type SigningKey } from "../../src/index.js";

/** A deterministic key from a 32-byte seed (RFC 8032 test seeds), built at run time: no key file is committed. */
export function keyFromSeed(seedHex: string): SigningKey {
  const der = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), Buffer.from(seedHex, "hex")]);
  return loadSigningKeyPem(
    createPrivateKey({ key: der, format: "der", type: "pkcs8" }).export({ format: "pem", type: "pkcs8" }).toString(),
  );
}

export const TEST_SEED_1 = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
export const TEST_SEED_2 = "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb";
