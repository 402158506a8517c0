#!/usr/bin/env node
/**
 * A reproduction, outside writ, of the lmdb-js abort on a full disk; its cause, in liblmdb's `mdb_page_flush`, and what
 * it did to the sidecar before its free-space reserve (sidecar/src/storage/lmdb/free-space.ts): docs/sidecar.md, "A
 * full disk, a failing data dir". `node scripts/repro/lmdb-full-disk-abort.mjs [runs]`, as root (it mounts a 6 MB
 * tmpfs). Each run fills the tmpfs with puts from 16 writers while two readers prefetch and read what was written, and
 * goes on writing for 8 s after the disk is full; it prints how each run ended (killed by SIGABRT, with glibc's
 * message, or not).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const TMPFS = "6m";
const BALLAST_BYTES = 5.25 * 1024 * 1024;
const WRITE_MS = 8_000;

if (process.argv[2] === "--child") {
  const { open } = await import("lmdb");
  const root = open({ path: process.argv[3], noReadAhead: true, maxDbs: 4 });
  const db = root.openDB("records");
  const value = Buffer.alloc(2_300, 7);
  const written = [];
  const counts = { committed: 0, failed: 0 };
  const deadline = Date.now() + WRITE_MS;
  process.on("unhandledRejection", () => undefined); // each failed put's commitError
  const writer = async (w) => {
    for (let i = 0; Date.now() < deadline; i++) {
      try {
        await db.put(`${w}-${i}`, { value, i });
        written.push(`${w}-${i}`);
        counts.committed++;
      } catch {
        counts.failed++;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
  };
  const reader = async () => {
    while (Date.now() < deadline) {
      const keys = Array.from({ length: Math.min(16, written.length) }, () => written[Math.floor(Math.random() * written.length)]);
      await db.prefetch(keys).catch(() => undefined);
      for (const key of keys) db.get(key);
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  // A failed batch's flush never resolves: exit rather than wait for it.
  await Promise.race([
    Promise.all([...Array.from({ length: 16 }, (_, w) => writer(w)), reader(), reader()]),
    new Promise((resolve) => setTimeout(resolve, WRITE_MS + 2_000)),
  ]);
  process.stdout.write(`${JSON.stringify(counts)}\n`);
  process.exit(0);
}

const runs = Number(process.argv[2] ?? 6);
const script = fileURLToPath(import.meta.url);
let aborted = 0;
for (let run = 1; run <= runs; run++) {
  const mount = mkdtempSync(join(tmpdir(), "lmdb-full-disk-"));
  spawnSync("mount", ["-t", "tmpfs", "-o", `size=${TMPFS}`, "tmpfs", mount], { stdio: "inherit" });
  try {
    writeFileSync(join(mount, "ballast"), Buffer.alloc(BALLAST_BYTES));
    const child = spawnSync(process.execPath, [script, "--child", join(mount, "data")], {
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
      env: { ...process.env, LIBC_FATAL_STDERR_: "1" },
    });
    // glibc's message ends the output, often glued to lmdb-js's last "Write error: …" line.
    const glibc = /Fatal glibc error: [^:\n]*|(?:malloc|free|realloc)\(\)[^\n]*|double free[^\n]*/.exec(child.stderr.slice(-400))?.[0];
    if (child.signal !== null) aborted++;
    console.log(
      `run ${run}: ${child.signal === null ? `exit ${child.status}, ${child.stdout.trim()}` : `killed by ${child.signal}${glibc ? `: ${glibc}` : ""}`}`,
    );
  } finally {
    spawnSync("umount", ["-l", mount]);
    rmSync(mount, { recursive: true, force: true });
  }
}
console.log(`${aborted} of ${runs} runs aborted`);
process.exitCode = aborted > 0 ? 1 : 0;
