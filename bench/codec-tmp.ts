import { readFileSync } from "node:fs";
import { randomBytes, randomUUID } from "node:crypto";
import { encodeRecord, decodeRecord, templateOf } from "../sidecar/src/storage/lmdb/record-coding.js";
const raw = JSON.parse(readFileSync("/tmp/sbx/records.json", "utf8")) as string[];
const recs = raw.map((t) => {
  const id = randomUUID();
  return t.replace(/"executionId":"[^"]*"/g, `"executionId":"${id}"`)
    .replace(/"signalsHash":"[0-9a-f]{64}"/, `"signalsHash":"${randomBytes(32).toString("hex")}"`)
    .replace(/"signature":"[^"]*"/, `"signature":"${randomBytes(64).toString("base64")}"`);
});
const templates = recs.slice(0, 25).map((r, i) => templateOf(r, recs[25 + i]!)!);
const mode = process.argv[2] ?? "size";
const N = Number(process.argv[3] ?? 2000);
let total = 0;
for (let i = 0; i < N; i++) {
  const r = recs[50 + (i % 2900)]!;
  const t = templates[(50 + (i % 2900)) % 25]!;
  if (mode === "none") { total += r.length; continue; }
  const c = encodeRecord(r, 1, t)!;
  total += Buffer.byteLength(c);
  if (mode === "size" && decodeRecord(c, () => t) !== r) throw new Error("mismatch " + i);
  if (mode === "decode") decodeRecord(c, () => t);
}
console.log(mode, total / N, templates[0]!.anchors.length);
