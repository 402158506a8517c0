import { createPrivateKey } from "node:crypto";
import { loadSigningKeyPem, type SigningKey } from "@writ/runtime";

/**
 * A fixed test key (RFC 8032 section 7.1 TEST 1 seed), built at run time from public test material so no
 * private key file is committed. Never use it for anything but tests.
 */
const SEED_HEX = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";

export function signingKeyForTests(): SigningKey {
  const der = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), Buffer.from(SEED_HEX, "hex")]);
  const pem = createPrivateKey({ key: der, format: "der", type: "pkcs8" }).export({ format: "pem", type: "pkcs8" }).toString();
  return loadSigningKeyPem(pem);
}
