/**
 * Helpers of the Surface B suite: a REAL listening sidecar with Surface B on a random port (Surface A beside it, as
 * in production), typed calls with the API key, raw requests for bad input, a valid Business Transaction, and
 * direct access to the LMDB environment of a stopped sidecar (to read what it stored, or to tamper with it). Every
 * answer to `call` and `send` is checked against Surface B's OpenAPI document when the sidecar stops
 * (support/openapi.ts).
 */
import { createPrivateKey, createPublicKey, randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { open, type Database, type Key } from "lmdb";
import { TRANSFER_SIGNALS } from "../support/policies.js";
import { assertDocumented, checkerOf, type RecordedAnswer } from "../support/openapi.js";
import { API_KEY, startTestSidecar, type TestSidecar } from "../support/sidecar.js";

export const AUTH = { authorization: `Bearer ${API_KEY}` } as const;
export const JSON_TYPE = { "content-type": "application/json" } as const;

/** An error body: `{error}`, with `details` on a 400 `Invalid request` or a 422 signal validation. */
export interface ErrorReply {
  readonly error: string;
  readonly details?: readonly unknown[];
}

export type Json = Record<string, unknown>;

/** `object` without the members `names`. */
export function without(object: object, ...names: string[]): Json {
  return Object.fromEntries(Object.entries(object).filter(([name]) => !names.includes(name)));
}

export interface Reply<T> {
  readonly status: number;
  /** The parsed JSON body, typed by the caller. */
  readonly body: T;
  readonly headers: Headers;
}

export interface SurfaceB {
  /** Surface B's URL. */
  readonly url: string;
  readonly dataDir: string;
  readonly running: TestSidecar;
  /** With the API key; an object body is sent as JSON, a string body as is with the JSON content type. */
  call<T = unknown>(method: string, path: string, body?: unknown): Promise<Reply<T>>;
  /** Exactly the request given: no API key or content type is added. */
  send<T = unknown>(
    method: string,
    path: string,
    init?: { readonly body?: string; readonly headers?: Readonly<Record<string, string>> },
  ): Promise<Reply<T>>;
  /** Shuts down, keeping the data dir for a restart. */
  stop(): Promise<void>;
  close(): Promise<void>;
}

async function reply<T>(response: Response, answers: RecordedAnswer[], method: string, path: string): Promise<Reply<T>> {
  const text = await response.text();
  answers.push({ method, path, status: response.status, contentType: response.headers.get("content-type") ?? "", text });
  return { status: response.status, body: (text === "" ? null : JSON.parse(text)) as T, headers: response.headers };
}

/** Starts a sidecar serving Surface B; `dataDir` restarts on a stopped one's data. */
export async function startSurfaceB(options: { readonly dataDir?: string; readonly env?: Record<string, string> } = {}): Promise<SurfaceB> {
  const running = await startTestSidecar(options.env ?? {}, {
    surfaceB: true,
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
  });
  const url = running.urls.b;
  if (url === null) throw new Error("Surface B is not listening");
  const answers: RecordedAnswer[] = [];
  const checkAnswers = () => assertDocumented(checkerOf("surface-b"), answers.splice(0));
  const send: SurfaceB["send"] = async (method, path, init = {}) =>
    reply(
      await fetch(`${url}${path}`, { method, headers: { ...init.headers }, ...(init.body === undefined ? {} : { body: init.body }) }),
      answers,
      method,
      path,
    );
  return {
    url,
    dataDir: running.dataDir,
    running,
    send,
    call: (method, path, body) =>
      send(method, path, {
        headers: { ...AUTH, ...(body === undefined ? {} : JSON_TYPE) },
        ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
      }),
    async stop() {
      await running.stop();
      checkAnswers();
    },
    async close() {
      await running.close();
      checkAnswers();
    },
  };
}

const AT = "2026-03-01T10:00:00.000Z";

/** A complete Business Transaction (spec 2.13) under conformance.transfer 1.0.0, approved unless `signals` say otherwise. */
export function businessTransaction(change: Readonly<Json> = {}): Json & { businessTransactionId: string } {
  const id = randomUUID();
  const authorityId = randomUUID();
  const authorizationId = randomUUID();
  return {
    businessTransactionId: id,
    metadata: { businessTransactionId: id, correlationId: randomUUID(), createdBy: "erp@example.com", createdAt: AT },
    authority: { authorityId, authorityType: "USER", principalId: randomUUID(), displayName: "Alice Example", issuedAt: AT },
    authorization: { authorizationId, authorityId, purpose: "supplier payment", authorizedAt: AT },
    intent: {
      intentId: randomUUID(),
      authorizationId,
      action: "transfer.execute",
      resource: "account/DE89370400440532013000",
      issuedAt: AT,
    },
    policy: { name: "conformance.transfer", version: "1.0.0" },
    signals: { ...TRANSFER_SIGNALS.approved },
    ...change,
  };
}

/** The SPKI PEM of the sidecar's signing key (generated into the data dir on first start). */
export async function publicKeyPem(dataDir: string): Promise<string> {
  return createPublicKey(createPrivateKey(await readFile(join(dataDir, "signing.key"), "utf8")))
    .export({ type: "spki", format: "pem" })
    .toString();
}

/** Runs `body` on a named database (JSON text values) of a stopped sidecar's LMDB environment. */
export async function withDatabase<T>(dataDir: string, name: string, body: (db: Database<string, Key>) => Promise<T> | T): Promise<T> {
  const root = open({ path: dataDir, maxDbs: 32, noSubdir: false });
  try {
    return await body(root.openDB<string, Key>(name, { encoding: "string" }));
  } finally {
    await root.close();
  }
}

/** Replaces the stored record of `id` by `change(record)` directly on disk; a string result is written as raw bytes. */
export async function tamperRecord(dataDir: string, id: string, change: (record: Json) => unknown): Promise<void> {
  await withDatabase(dataDir, "surface-b-records", async (db) => {
    const text = db.get(id);
    if (text === undefined) throw new Error(`no stored record for ${id}`);
    const changed = change(JSON.parse(text) as Json);
    await db.put(id, typeof changed === "string" ? changed : JSON.stringify(changed));
  });
}
