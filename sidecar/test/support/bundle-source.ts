/**
 * A remote bundle source for tests: a real HTTP server in the test process serving `index.json` and
 * archives from memory, which a test changes, corrupts, rolls back, slows down and takes away; and a publisher that
 * compiles variants of the `conformance.transfer` fixture, packs them and signs the index, as `writ bundle` does.
 */
import { createHash, generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile } from "@writ/compiler";
import {
  INDEX_FILE,
  archiveFileName,
  loadSigningKeyPem,
  packBundleArchive,
  signSourceIndex,
  type SigningKey,
  type SourceAlias,
} from "@writ/runtime";

const REPO = new URL("../../../", import.meta.url).pathname;
const TRANSFER_SOURCE = readFileSync(join(REPO, "conformance/fixtures/policies/conformance.transfer/1.0.0/policy.writ"), "utf8");
export const POLICY_ID = "conformance.transfer";

/** A bundle key pair: the private half signs, the public half is in a PEM file for SERVICE_BUNDLE_KEYS. */
export interface BundleKey {
  readonly key: SigningKey;
  readonly publicKeyFile: string;
}

export async function bundleKey(): Promise<BundleKey> {
  const pair = generateKeyPairSync("ed25519");
  const dir = await mkdtemp(join(tmpdir(), "writ-bundle-key-"));
  const publicKeyFile = join(dir, "bundle.pub");
  await writeFile(publicKeyFile, pair.publicKey.export({ type: "spki", format: "pem" }).toString());
  return { key: loadSigningKeyPem(pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString()), publicKeyFile };
}

/**
 * The archive of `conformance.transfer` at `version`, whose escalation threshold is `threshold` (the fixture's is
 * 10000): another threshold is other rules, hence another `bundle_hash`. Unsigned when `key` is null.
 */
export function transferArchive(version: string, key: SigningKey | null, threshold = 10_000): Uint8Array {
  const text = TRANSFER_SOURCE.replace('version "1.0.0"', `version "${version}"`).replace("amount > 10000", `amount > ${threshold}`);
  const result = compile(`${version}/policy.writ`, text, key ? { signingKey: key } : {});
  if (!result.valid || !result.bundle)
    throw new Error(`the transfer variant does not compile: ${result.errors.map((e) => e.message).join("; ")}`);
  return packBundleArchive(result.bundle.files);
}

export interface Publication {
  readonly serial: number;
  /** Version to archive bytes. */
  readonly archives: ReadonlyMap<string, Uint8Array>;
  readonly aliases?: readonly SourceAlias[];
  readonly expiresAt?: string;
  /** Default: now. */
  readonly issuedAt?: string;
}

/** The files of a source serving `publication`, its index signed with `key`. */
export function sourceFiles(publication: Publication, key: SigningKey): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const bundles = [];
  for (const [version, bytes] of publication.archives) {
    const archive = JSON.parse(Buffer.from(bytes).toString("utf8")) as { bundle_hash: string };
    bundles.push({ policyId: POLICY_ID, version, bundle_hash: archive.bundle_hash });
    files.set(archiveFileName(POLICY_ID, version), bytes);
  }
  const index = {
    indexVersion: 1 as const,
    serial: publication.serial,
    issuedAt: publication.issuedAt ?? new Date().toISOString(),
    ...(publication.expiresAt ? { expiresAt: publication.expiresAt } : {}),
    bundles,
    aliases: publication.aliases ?? [],
  };
  files.set(INDEX_FILE, signSourceIndex(index, key));
  return files;
}

/** A static file server over a map the test changes at will; ETags are SHA-256 of the bytes. */
export class BundleServer {
  files = new Map<string, Uint8Array>();
  /** Every answer waits this long first (a slow source). */
  delayMs = 0;
  /** Requests by path, and how many were answered 304. */
  readonly requests: string[] = [];
  notModified = 0;
  #server: Server;
  readonly #sockets = new Set<Socket>();
  #port = 0;

  private constructor() {
    this.#server = this.#create();
  }

  static async start(): Promise<BundleServer> {
    const server = new BundleServer();
    await server.#listen(0);
    return server;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}/source/`;
  }

  /** The source disappears: the listener closes and every open connection is cut. */
  async stop(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** The source returns on the same port. */
  async restart(): Promise<void> {
    this.#server = this.#create();
    await this.#listen(this.#port);
  }

  #create(): Server {
    const server = createServer((request, response) => void this.#answer(request, response));
    server.on("connection", (socket) => {
      this.#sockets.add(socket);
      socket.once("close", () => this.#sockets.delete(socket));
    });
    return server;
  }

  async #listen(port: number): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(port, "127.0.0.1", () => resolve()));
    this.#port = (this.#server.address() as { port: number }).port;
  }

  async #answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname);
    this.requests.push(path);
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    const bytes = path.startsWith("/source/") ? this.files.get(path.slice("/source/".length)) : undefined;
    if (bytes === undefined) {
      response.writeHead(404).end();
      return;
    }
    const etag = `"${createHash("sha256").update(bytes).digest("hex")}"`;
    if (request.headers["if-none-match"] === etag) {
      this.notModified += 1;
      response.writeHead(304, { etag }).end();
      return;
    }
    response.writeHead(200, { "content-type": "application/json", "content-length": bytes.length, etag }).end(bytes);
  }
}
