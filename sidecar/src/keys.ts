/**
 * The sidecar's secrets on disk: the signing key file (docs/sidecar.md: created with mode 0600 on first start
 * when absent) and, in development mode only, a generated API key kept beside it.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { generateSigningKeyPair, loadSigningKeyPem, type SigningKey } from "@writ/runtime";
import { ConfigError, assertOwnerOnly } from "./env.js";

const SECRET_MODE = 0o600;

async function readIfPresent(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new ConfigError(`cannot read \`${path}\`: ${(e as Error).message}`);
  }
}

/** Writes a new secret file; `wx` fails if another process created it first, and then its key is the one read. */
async function createSecret(path: string, content: string): Promise<boolean> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  try {
    await writeFile(path, content, { mode: SECRET_MODE, flag: "wx" });
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw new ConfigError(`cannot create \`${path}\`: ${(e as Error).message}`);
  }
}

/** A key file readable by group or others is refused: the signing key is the service's identity. */
async function assertPrivate(path: string): Promise<void> {
  assertOwnerOnly(path, (await stat(path)).mode);
}

export function parseSigningKey(pem: string, source: string): SigningKey {
  try {
    return loadSigningKeyPem(pem);
  } catch (e) {
    throw new ConfigError(`${source} is not a usable Ed25519 PKCS8 PEM key: ${(e as Error).message}`);
  }
}

/** The key in `path`, generated there on first start. */
export async function loadOrCreateSigningKey(path: string): Promise<{ key: SigningKey; created: boolean }> {
  let pem = await readIfPresent(path);
  let created = false;
  if (pem === null) {
    created = await createSecret(path, generateSigningKeyPair().privateKeyPem);
    pem = (await readIfPresent(path)) ?? "";
  }
  await assertPrivate(path);
  return { key: parseSigningKey(pem, `signing key file \`${path}\``), created };
}

/** Development mode: the API key kept in `dataDir/api-key`, generated (256 random bits) on first start. */
export async function loadOrCreateDevApiKey(dataDir: string): Promise<{ apiKey: string; created: boolean; path: string }> {
  const path = join(dataDir, "api-key");
  let created = false;
  if ((await readIfPresent(path)) === null) created = await createSecret(path, `${randomBytes(32).toString("base64url")}\n`);
  await assertPrivate(path);
  const apiKey = ((await readIfPresent(path)) ?? "").trim();
  if (apiKey === "") throw new ConfigError(`\`${path}\` is empty; delete it to have a new key generated`);
  return { apiKey, created, path };
}
