/**
 * Helpers of the end-to-end suite (sidecar/test/e2e): a REAL listening sidecar on a random port with a fresh LMDB
 * data dir and the fixture policies, typed JSON calls with the API key, raw requests for bad input (fetch, and
 * node:http for chunked bodies), and offline signature checks: the runtime's own, and an independent one written
 * from docs/signing.md with node:crypto and the `canonicalize` RFC 8785 library (no writ code). Every answer to `call`
 * and `send` is checked against Surface A's OpenAPI document when the sidecar closes (support/openapi.ts).
 */
import { createHash, createPrivateKey, createPublicKey, randomUUID, sign, verify, type KeyObject } from "node:crypto";
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import canonicalize from "canonicalize";
import {
  createTrustRoot,
  loadSigningKeyPem,
  type AttestationV1,
  type AttestationV2,
  type Evaluated,
  type PublicKey,
  type VerifierOptions,
} from "@writ/runtime";
import { loadConfig, startSidecar, type Env, type Logger, type RunningSidecar } from "@writ/sidecar";
import { assertDocumented, checkerOf, type RecordedAnswer } from "./openapi.js";
import { fixturePoliciesRoot } from "./policies.js";

export const API_KEY = "e2e-api-key-0123456789abcdef-ZZ";
export const AUTH = { authorization: `Bearer ${API_KEY}` } as const;
export const JSON_TYPE = { "content-type": "application/json" } as const;

/** The policy every suite evaluates: escalates above 10000 (1.0.0). */
export const TRANSFER = { policyId: "conformance.transfer", policyVersion: "1.0.0" } as const;
/** No catch-all: `{flag: false}` is undecided (SYS-006). */
export const UNDECIDED = { policyId: "conformance.undecided", policyVersion: "1.0.0" } as const;

/** DSSE payload types, copied from docs/signing.md (not imported: the independent check must not trust writ). */
export const PAYLOAD = {
  attestation: "application/vnd.writ.attestation.v1+json",
  override: "application/vnd.writ.override.v1+json",
  executionProof: "application/vnd.writ.execution-proof.v1+json",
  runtimeManifest: "application/vnd.writ.runtime-manifest.v1+json",
} as const;

/** A unique executionId: tests share a sidecar, and an executionId is consumed once. */
export function uid(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

export interface Reply<T> {
  readonly status: number;
  /** The parsed JSON body (typed by the caller: the one place a response body is trusted to a type), else the text. */
  readonly body: T;
  readonly text: string;
  readonly headers: Headers;
}

export interface SendInit {
  /** Sent as is. */
  readonly body?: string | Uint8Array;
  /** Exactly these headers: no API key or content type is added. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface E2eSidecar {
  readonly url: string;
  readonly dataDir: string;
  readonly running: RunningSidecar;
  /** With the API key; an object body is sent as JSON (a string body as is, with the JSON content type). */
  call<T = unknown>(method: string, path: string, body?: unknown, headers?: Readonly<Record<string, string>>): Promise<Reply<T>>;
  /** Exactly the request given (for authentication and bad-input tests). */
  send<T = unknown>(method: string, path: string, init?: SendInit): Promise<Reply<T>>;
  /** Stops the sidecar, then checks every answer it gave against the OpenAPI document. */
  close(): Promise<void>;
}

async function reply<T>(response: Response): Promise<Reply<T>> {
  const text = await response.text();
  const json = (response.headers.get("content-type") ?? "").startsWith("application/json") && text !== "";
  return { status: response.status, body: (json ? JSON.parse(text) : text) as T, text, headers: response.headers };
}

/**
 * Starts a sidecar. `env` overrides the defaults; a value of `undefined` unsets one (e.g. `SERVICE_DATA_DIR:
 * undefined` for a sidecar without a data dir, hence without a signing key). `options.log`: the root logger (by
 * default one at SERVICE_LOG_LEVEL, `silent`).
 */
export async function startE2eSidecar(
  env: Env = {},
  options: { readonly policiesRoot?: string; readonly log?: Logger } = {},
): Promise<E2eSidecar> {
  const dataDir = await mkdtemp(join(tmpdir(), "writ-e2e-data-"));
  let running: RunningSidecar;
  try {
    const config = loadConfig({
      SERVICE_API_KEY: API_KEY,
      SERVICE_POLICIES_ROOT: options.policiesRoot ?? (await fixturePoliciesRoot()),
      SERVICE_DATA_DIR: dataDir,
      SERVICE_PORT: "0",
      SERVICE_B_PORT: "off",
      SERVICE_LOG_LEVEL: "silent",
      ...env,
    });
    running = await startSidecar(config, options.log === undefined ? {} : { log: options.log });
  } catch (e) {
    await rm(dataDir, { recursive: true, force: true });
    throw e;
  }
  const url = running.urls.a;
  if (url === null) throw new Error("Surface A is not listening");
  const answers: RecordedAnswer[] = [];
  const send = async <T>(method: string, path: string, init: SendInit = {}): Promise<Reply<T>> => {
    const answered = await reply<T>(
      await fetch(`${url}${path}`, { method, headers: { ...init.headers }, ...(init.body === undefined ? {} : { body: init.body }) }),
    );
    answers.push({ method, path, status: answered.status, contentType: answered.headers.get("content-type") ?? "", text: answered.text });
    return answered;
  };
  return {
    url,
    dataDir,
    running,
    send,
    call: <T>(method: string, path: string, body?: unknown, headers: Readonly<Record<string, string>> = {}) =>
      send<T>(method, path, {
        headers: { ...AUTH, ...(body === undefined ? {} : JSON_TYPE), ...headers },
        ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
      }),
    async close() {
      await running.close();
      await rm(dataDir, { recursive: true, force: true });
      assertDocumented(checkerOf("surface-a"), answers);
    },
  };
}

/** A copy of the fixture policies root (to break a bundle in, without touching the shared one). */
export async function copyOfFixturePolicies(): Promise<string> {
  const copy = await mkdtemp(join(tmpdir(), "writ-e2e-policies-"));
  await cp(await fixturePoliciesRoot(), copy, { recursive: true });
  return copy;
}

/** The sidecar's signing key, as an operator holding the data dir has it (`signing.key`, generated on first start). */
export async function signingKeyPem(s: E2eSidecar): Promise<string> {
  return readFile(join(s.dataDir, "signing.key"), "utf8");
}

/** The sidecar's public key, for the runtime's offline verification. */
export async function publicKeyOf(s: E2eSidecar): Promise<PublicKey> {
  return loadSigningKeyPem(await signingKeyPem(s)).publicKey;
}

/** What an offline verifier pins: only the sidecar's public key, under the trust root version the attestation names. */
export function offlineVerifier(key: PublicKey, trustRootVersion: string): VerifierOptions {
  return { trustRoot: createTrustRoot(trustRootVersion, [key]) };
}

/** SPKI PEM of the sidecar's public key, derived with node:crypto alone. */
export async function publicKeyPemOf(s: E2eSidecar): Promise<string> {
  return createPublicKey(createPrivateKey(await signingKeyPem(s)))
    .export({ type: "spki", format: "pem" })
    .toString();
}

/**
 * The independent check of a writ signature (docs/signing.md), with no writ code:
 * Ed25519 over PAE(payloadType, JCS(object without "signature")), PAE = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body.
 */
export function independentlyVerifies(payloadType: string, object: object, publicKeyPem: string): boolean {
  const { signature } = object as { signature?: unknown };
  if (typeof signature !== "string") return false;
  return verify(null, signingInput(payloadType, object), createPublicKey(publicKeyPem), Buffer.from(signature, "base64"));
}

/** The same construction, signing: a signature by a key the sidecar does not trust. */
export function independentlySign(payloadType: string, object: object, privateKey: KeyObject): string {
  return sign(null, signingInput(payloadType, object), privateKey).toString("base64");
}

function signingInput(payloadType: string, object: object): Buffer {
  const { signature: _signature, ...unsigned } = object as Record<string, unknown>;
  const body = Buffer.from(canonicalize(unsigned) ?? "", "utf8");
  const type = Buffer.from(payloadType, "utf8");
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${body.length} `), body]);
}

/** `signalsHash` as docs/signing.md defines it: lowercase hex SHA-256 of JCS(signal values). */
export function independentSignalsHash(signals: Readonly<Record<string, unknown>>): string {
  return sha256OfJcs(signals);
}

/** Lowercase hex SHA-256 of the RFC 8785 form of `value`. */
export function sha256OfJcs(value: unknown): string {
  return createHash("sha256")
    .update(canonicalize(value) ?? "", "utf8")
    .digest("hex");
}

/** An ISO 8601 instant, as `expect.stringMatching` takes it. */
export const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** A writ signature: standard padded base64 of 64 bytes. */
export const SIGNATURE = /^[A-Za-z0-9+/]{86}==$/;
export const HEX64 = /^[0-9a-f]{64}$/;

export interface RawReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly text: string;
}

/**
 * A POST with a chunked body (`Transfer-Encoding: chunked`, no content-length) over node:http, which fetch cannot
 * send from a string. A server that answers before reading everything (413) may close the socket while chunks are
 * still going out: the write error is ignored once a response has arrived.
 */
export function postChunked(
  url: string,
  path: string,
  chunks: readonly Uint8Array[],
  headers: Readonly<Record<string, string>>,
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(`${url}${path}`, { method: "POST", headers: { ...headers, "transfer-encoding": "chunked" } }, (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on("data", (part: Buffer) => parts.push(part));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", (e) => {
      if (!answered) reject(e);
    });
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

/** `text` cut into chunks of `size` bytes. */
export function chunksOf(text: string, size: number): Uint8Array[] {
  const bytes = Buffer.from(text, "utf8");
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

/**
 * A JSON body of exactly `bytes` bytes (UTF-8): `body` plus a `signalProvenance` member padded with ASCII to
 * length (audited, never hashed or evaluated, so padding it changes no decision).
 */
export function paddedBody(body: Readonly<Record<string, unknown>>, bytes: number): string {
  const empty = JSON.stringify({ ...body, signalProvenance: { pad: "" } });
  const room = bytes - Buffer.byteLength(empty, "utf8");
  if (room < 0) throw new Error(`body is already ${Buffer.byteLength(empty, "utf8")} bytes`);
  const text = JSON.stringify({ ...body, signalProvenance: { pad: "x".repeat(room) } });
  if (Buffer.byteLength(text, "utf8") !== bytes) throw new Error("padding miscounted");
  return text;
}

/** `POST /confirm-execution` (spec 2.9, endpoint form, plus writ's `match` and `verified` summary). */
export interface ConfirmReply {
  readonly matched: boolean;
  readonly executionId: string;
  readonly withinTimeWindow: boolean;
  /** The signed Execution Integrity Proof as its canonical JSON text. */
  readonly proof: string;
  readonly match: boolean;
  readonly verified: boolean;
}

/** `POST /evaluate` variant 1 with `verifiedSignals` under conformance.transfer 1.0.0. */
export function evaluate(
  s: E2eSidecar,
  verifiedSignals: Readonly<Record<string, unknown>>,
  executionId: string = uid("eval"),
): Promise<Reply<Evaluated<AttestationV1>>> {
  return s.call<Evaluated<AttestationV1>>("POST", "/evaluate", { executionId, ...TRANSFER, verifiedSignals });
}

/** An override body for `executionId`; every member required (spec 2.8). */
export function overrideOf(executionId: string, approved: boolean): Record<string, unknown> {
  return {
    executionId,
    approved,
    approvedBy: "alice@example.com",
    approverRole: "payments-supervisor",
    reason: approved ? "checked with the customer" : "not plausible",
  };
}

/**
 * What the external system reports having executed for `attestation`: the governed action type, the bound signals
 * echoed, stamped now (inside the default 300 s window). `change` replaces members of the executed action.
 */
export function executedActionFor(
  attestation: AttestationV1 | AttestationV2,
  change: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> {
  return {
    actionType: attestation.actionType,
    actionId: uid("bank-transfer"),
    actionTimestamp: new Date().toISOString(),
    actionDetails: { ...attestation.actionBinding, memo: "invoice 42" },
    ...change,
  };
}

/** Status and body only, for an exact `toEqual` of both (`toMatchObject` would let extra body members through). */
export function answer(reply: Reply<unknown>): { status: number; body: unknown } {
  return { status: reply.status, body: reply.body };
}
