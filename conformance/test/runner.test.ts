/**
 * The runner's rules, against a small scripted HTTP server: file order with `runLast` cases at the end, fresh UUIDs
 * per case, captures between steps, a failing step stopping its case, repeat steps with counts and `until`,
 * skipped cases without the public key, network errors as case failures, setup errors as errors, and the table.
 */
import { generateKeyPairSync } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConformanceSetupError, runConformance } from "../src/runner.js";
import { formatTable } from "../src/table.js";

let server: Server;
let base: string;
let dir: string;
const seen: { method: string; url: string; authorization: string | undefined; body: string }[] = [];
/** The requests to `url` (the run's reachability probe, GET /health, aside). */
const sent = (url: string) => seen.filter((s) => s.url === url);
let consumed = new Set<string>();
let budget = 0;

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** A toy server: /echo answers what it got, /once consumes ids, /limited answers 429 after `budget` requests. */
function handle(req: IncomingMessage, res: ServerResponse, body: string): void {
  seen.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization, body });
  const url = req.url ?? "";
  if (url === "/echo")
    return json(res, 200, {
      method: req.method,
      authorization: req.headers.authorization ?? null,
      body: body === "" ? null : (JSON.parse(body) as unknown),
    });
  if (url === "/once") {
    const id = (JSON.parse(body) as { id: string }).id;
    if (consumed.has(id)) return json(res, 422, { error: "[INV-013@replay] consumed" });
    consumed.add(id);
    return json(res, 200, { id });
  }
  if (url === "/limited")
    return budget-- > 0 ? json(res, 200, {}) : json(res, 429, { error: "Rate limit exceeded" }, { "retry-after": "30" });
  if (url === "/rate-limited") return json(res, 429, { error: "Rate limit exceeded" }, { "retry-after": "30" });
  if (url === "/duplicate") {
    res.writeHead(200, { "content-type": "application/json" });
    return void res.end('{"a":1,"a":2}');
  }
  if (url === "/hang-up") return void req.socket.destroy();
  json(res, 404, { error: "not found" });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (p: Buffer) => parts.push(p));
    req.on("end", () => handle(req, res, Buffer.concat(parts).toString("utf8")));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = await mkdtemp(join(tmpdir(), "writ-conformance-runner-"));
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
/** A cases dir with one surface-a file per entry of `files` (area -> cases). */
async function casesDir(files: Record<string, unknown[]>): Promise<string> {
  const root = join(dir, `cases-${n++}`);
  await mkdir(join(root, "surface-a"), { recursive: true });
  for (const [area, cases] of Object.entries(files)) {
    await writeFile(join(root, "surface-a", `${area}.json`), JSON.stringify({ surface: "a", area, title: area, cases }));
  }
  return root;
}

const echo = (extra: Record<string, unknown> = {}) => ({
  request: { method: "POST", path: "/echo", body: { id: "{{uuid:e}}" } },
  expect: { status: 200 },
  ...extra,
});

async function run(files: Record<string, unknown[]>, options: { publicKeyPem?: string; filter?: string } = {}) {
  seen.length = 0;
  consumed = new Set();
  return runConformance({ surface: "a", baseUrl: base, apiKey: "the-key", casesDir: await casesDir(files), ...options });
}

describe("runConformance", () => {
  it("runs files in name order, cases in file order, runLast cases at the end", async () => {
    const report = await run({
      b: [{ id: "a.b.first", section: "3", title: "t", steps: [echo()] }],
      a: [
        { id: "a.a.last", section: "8", title: "t", runLast: true, steps: [echo()] },
        { id: "a.a.one", section: "2.10", title: "t", steps: [echo()] },
        { id: "a.a.two", section: "2.9", title: "t", steps: [echo()] },
      ],
    });
    expect(report.cases.map((c) => c.id)).toEqual(["a.a.one", "a.a.two", "a.b.first", "a.a.last"]);
    expect(report.sections.map((s) => s.section)).toEqual(["2.9", "2.10", "3", "8"]);
    expect(report).toMatchObject({
      passed: true,
      surface: "a",
      target: base,
      totals: { pass: 4, fail: 0, skip: 0 },
      suite: "writ-conformance",
    });
  });

  it("gives each case its own UUIDs and sends the key as Bearer", async () => {
    await run({ x: [1, 2].map((i) => ({ id: `a.x.c${i}`, section: "3", title: "t", steps: [echo(), echo()] })) });
    const ids = sent("/echo").map((s) => (JSON.parse(s.body) as { id: string }).id);
    expect(ids[0]).toBe(ids[1]);
    expect(ids[2]).toBe(ids[3]);
    expect(ids[0]).not.toBe(ids[2]);
    expect(sent("/echo").every((s) => s.authorization === "Bearer the-key")).toBe(true);
  });

  it("captures values for later steps and matches them", async () => {
    const report = await run({
      x: [
        {
          id: "a.x.capture",
          section: "3",
          title: "t",
          steps: [
            { request: { method: "POST", path: "/echo", body: { v: { n: 1 } } }, expect: { status: 200 }, capture: { v: "/body/v" } },
            {
              request: { method: "POST", path: "/echo", body: { again: "{{capture:v}}" } },
              expect: { status: 200, body: { body: { again: { $captured: "v" } } } },
            },
          ],
        },
      ],
    });
    expect(report.passed).toBe(true);
    expect(JSON.parse(sent("/echo")[1]!.body)).toEqual({ again: { n: 1 } });
  });

  it("sends UUIDs of a chosen version, variant and case; $isoTime withinSeconds measures from when the request was sent", async () => {
    const body = { id: "{{uuid:tx:5b:upper}}", v1: "{{uuid:v1:18}}", now: "{{now}}", soon: "{{now+60}}", hourAgo: "{{now-3600}}" };
    const report = await run({
      x: [
        {
          id: "a.x.ok",
          section: "3",
          title: "t",
          steps: [
            {
              request: { method: "POST", path: "/echo", body },
              expect: {
                status: 200,
                body: {
                  body: {
                    id: { $captured: "uuid:tx", $regex: "^[0-9A-F]{8}-[0-9A-F]{4}-5[0-9A-F]{3}-B[0-9A-F]{3}-[0-9A-F]{12}$" },
                    v1: { $captured: "uuid:v1", $regex: "^[0-9a-f]{8}-[0-9a-f]{4}-1[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$" },
                    now: { $isoTime: { withinSeconds: 5 } },
                    soon: { $isoTime: { withinSeconds: 65 } },
                    hourAgo: { $not: { $isoTime: { withinSeconds: 3000 } } },
                  },
                },
              },
              capture: { first: "/body/v1" },
            },
            {
              request: { method: "POST", path: "/echo", body: { v1: "{{uuid:v1:18}}", fresh: "{{uuid:f:18}}" } },
              expect: { status: 200, body: { body: { v1: { $captured: "first" }, fresh: { $not: { $captured: "first" } } } } },
            },
          ],
        },
        {
          id: "a.x.late",
          section: "3",
          title: "t",
          steps: [
            {
              request: { method: "POST", path: "/echo", body },
              expect: {
                status: 200,
                body: {
                  body: {
                    hourAgo: { $isoTime: { withinSeconds: 3000 } },
                    soon: { $isoTime: { withinSeconds: 30 } },
                    id: { $not: { $captured: "uuid:tx" } },
                  },
                },
              },
            },
          ],
        },
      ],
    });
    expect(report.cases[0]).toMatchObject({ outcome: "pass", failures: [] });
    const sentId = (JSON.parse(sent("/echo")[0]!.body) as { id: string }).id;
    expect(sentId).toBe(sentId.toUpperCase());
    expect(report.cases[1]!.failures).toEqual([
      {
        step: 0,
        message: expect.stringMatching(
          /^body \/body\/hourAgo: expected an ISO 8601 date-time within 3000 s of when the request was sent \(.*\), got ".*", 3600\.\d{3} s before it$/,
        ),
      },
      {
        step: 0,
        message: expect.stringMatching(
          /^body \/body\/soon: expected an ISO 8601 date-time within 30 s of when the request was sent \(.*\), got ".*", (59|60)\.\d{3} s after it$/,
        ),
      },
      { step: 0, message: expect.stringMatching(/^body \/body\/id: expected anything but \$captured "uuid:tx", got "[0-9A-F-]{36}"$/) },
    ]);
  });

  it("stops a case at its failing step, with every problem of that step", async () => {
    const report = await run({
      x: [
        {
          id: "a.x.fails",
          section: "3",
          title: "t",
          steps: [
            echo(),
            {
              request: { method: "POST", path: "/echo", body: { a: 1 } },
              expect: { status: 200, body: { method: "GET", body: { a: 2 }, extra: { $type: "string" } } },
            },
            echo(),
          ],
        },
      ],
    });
    expect(report.cases[0]!.failures).toEqual([
      { step: 1, message: 'body /method: expected "GET", got "POST"' },
      { step: 1, message: "body /body/a: expected 2, got 1" },
      { step: 1, message: "body /extra: missing, expected string" },
    ]);
    expect(sent("/echo").length).toBe(2);
    expect(report.passed).toBe(false);
  });

  it("reports a wrong status alone, with the body it came with", async () => {
    const report = await run({
      x: [
        {
          id: "a.x.status",
          section: "7",
          title: "t",
          steps: [{ request: { method: "GET", path: "/nowhere" }, expect: { status: [200, 201], body: { ok: true } } }],
        },
      ],
    });
    expect(report.cases[0]!.failures).toEqual([
      { step: 0, message: 'status: expected one of 200, 201, got 404 (body {"error":"not found"})' },
    ]);
  });

  it("repeat: concurrent identical requests tallied by status; unlisted statuses fail", async () => {
    const step = (counts: Record<string, unknown>) => ({
      request: { method: "POST", path: "/once", body: { id: "{{uuid:e}}" } },
      repeat: { count: 10, concurrency: 10 },
      expect: { status: [200, 422], counts },
    });
    const report = await run({
      x: [
        { id: "a.x.ok", section: "8", title: "t", steps: [step({ "200": 1, "422": 9 })] },
        { id: "a.x.bad", section: "8", title: "t", steps: [step({ "200": 2 })] },
      ],
    });
    expect(report.cases[0]!.outcome).toBe("pass");
    expect(report.cases[1]!.failures.map((f) => f.message)).toEqual([
      "counts 200: expected 2, got 1",
      "counts: 9 answers with status 422, none expected",
      "counts: got 200 ×1, 422 ×9",
    ]);
  });

  it("repeat until: stops at the first answer with that status and checks it; none within the count fails", async () => {
    const step = (count: number) => ({
      request: { method: "POST", path: "/limited", body: { id: "{{uuid}}" } },
      repeat: { count, until: 429 },
      expect: {
        status: 429,
        body: { error: "Rate limit exceeded" },
        headers: { "retry-after": { $regex: "^[0-9]+$" } },
        counts: { "200": { $lte: 5 }, "429": 1 },
      },
    });
    budget = 5;
    const ok = await run({ x: [{ id: "a.x.until", section: "8", title: "t", steps: [step(10)] }] });
    expect(ok.passed).toBe(true);
    expect(sent("/limited").length).toBe(6);
    // `{{uuid}}` is fresh for every repetition.
    expect(new Set(sent("/limited").map((s) => s.body)).size).toBe(6);
    budget = 5;
    const short = await run({ x: [{ id: "a.x.until", section: "8", title: "t", steps: [step(3)] }] });
    expect(short.cases[0]!.failures).toEqual([{ step: 0, message: "status: expected a 429 within 3 requests, got none (200 ×3)" }]);
  });

  it("a body that is not strict JSON fails the checks that read it", async () => {
    const report = await run({
      x: [
        {
          id: "a.x.dup",
          section: "2.2",
          title: "t",
          steps: [{ request: { method: "GET", path: "/duplicate" }, expect: { status: 200, body: { a: 2 } } }],
        },
      ],
    });
    expect(report.cases[0]!.failures).toEqual([{ step: 0, message: "body: not strict JSON: duplicate key `a` at line 1 column 8" }]);
  });

  it("a lost connection is the case's failure, with what happened", async () => {
    const report = await run({
      x: [{ id: "a.x.net", section: "3", title: "t", steps: [{ request: { method: "GET", path: "/hang-up" }, expect: { status: 200 } }] }],
    });
    expect(report.cases[0]!.failures).toEqual([{ step: 0, message: expect.stringMatching(/^network error: GET \/hang-up: no answer: /) }]);
  });

  it("skips cases that need the public key when there is none, and checks signatures when there is", async () => {
    const signed = {
      id: "a.x.signed",
      section: "2.2",
      title: "t",
      requires: ["public-key"],
      steps: [
        {
          request: { method: "POST", path: "/echo", body: { signature: "x" } },
          expect: { status: 200, signatures: [{ at: "/body", payloadType: "t" }] },
        },
      ],
    };
    const without = await run({ x: [signed] });
    expect(without.cases[0]).toMatchObject({ outcome: "skip", skipReason: "needs the server's public key (--public-key)" });
    expect(without).toMatchObject({ passed: true, publicKeyId: null });
    const pem = generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "pem" }).toString();
    const withKey = await run({ x: [signed] }, { publicKeyPem: pem });
    expect(withKey.cases[0]!.failures).toEqual([
      { step: 0, message: "body /body/signature: signature is not 88 characters of padded standard base64" },
    ]);
  });

  it("filters by id prefix", async () => {
    const report = await run(
      { x: ["a.x.one", "a.x.two", "a.x.other"].map((id) => ({ id, section: "3", title: "t", steps: [echo()] })) },
      { filter: "a.x.t" },
    );
    expect(report.cases.map((c) => c.id)).toEqual(["a.x.two"]);
  });

  it("a run that cannot start is a setup error", async () => {
    const files = { x: [{ id: "a.x.one", section: "3", title: "t", steps: [echo()] }] };
    await expect(
      runConformance({ surface: "a", baseUrl: "http://127.0.0.1:1", apiKey: "k", casesDir: await casesDir(files) }),
    ).rejects.toThrow(new ConformanceSetupError("cannot reach `http://127.0.0.1:1`: connect ECONNREFUSED 127.0.0.1:1"));
    await expect(
      runConformance({ surface: "a", baseUrl: base, apiKey: "k", publicKeyPem: "nope", casesDir: await casesDir(files) }),
    ).rejects.toThrow(/^the public key is unusable: not a PEM public key/);
    await expect(runConformance({ surface: "b", baseUrl: base, apiKey: "k", casesDir: await casesDir(files) })).rejects.toThrow(
      /^cannot read the case directory `/,
    );
  });
});

describe("formatTable", () => {
  it("prints the sections in order, the totals, each failing case with its messages, and the verdict", async () => {
    const report = await run({
      x: [
        { id: "a.x.ok", section: "2.10", title: "passes", steps: [echo()] },
        {
          id: "a.x.no",
          section: "2.9",
          title: "fails",
          steps: [{ request: { method: "GET", path: "/nowhere" }, expect: { status: 200 } }],
        },
      ],
    });
    const lines = formatTable({ ...report, durationMs: 1234 }).split("\n");
    expect(lines).toEqual([
      `writ conformance: Surface A at ${base} (2 cases, 1.2 s)`,
      "signatures: not checked (no --public-key); those cases are skipped",
      "",
      "section  pass  fail  skip",
      "2.9         0     1     0",
      "2.10        1     0     0",
      "total       1     1     0",
      "",
      "failed:",
      "  a.x.no (section 2.9): fails",
      '    step 0: status: expected 200, got 404 (body {"error":"not found"})',
      "",
      "FAIL: 1 of 2 cases failed",
    ]);
  });

  it("says when failing cases were rate limited, the usual sign of a spent POST /execute budget", async () => {
    const report = await run({
      x: [
        {
          id: "a.x.limited",
          section: "8",
          title: "limited",
          steps: [{ request: { method: "GET", path: "/rate-limited" }, expect: { status: 200 } }],
        },
      ],
    });
    const text = formatTable(report);
    expect(text).toContain("status: expected 200, got 429");
    expect(text).toContain("note: 1 failing case was answered 429 (rate limited)");
    expect(
      formatTable(
        await run({
          x: [
            {
              id: "a.x.gone",
              section: "8",
              title: "gone",
              steps: [{ request: { method: "GET", path: "/nowhere" }, expect: { status: 200 } }],
            },
          ],
        }),
      ),
    ).not.toContain("note:");
  });
});
