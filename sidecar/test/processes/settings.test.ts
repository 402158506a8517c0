import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { ConfigError } from "../../src/env.js";
import { coresPerProcess, processCount, processIndex } from "../../src/processes/settings.js";
import { autoSigningThreads } from "../../src/signing/settings.js";
import { usableCores } from "../../src/signing/usable-cores.js";
import { fleetInstanceId } from "../../src/storage/instance-id.js";

const POSTGRES = {
  SERVICE_API_KEY: "processes-test-key-0123456789",
  SERVICE_STORE: "postgres",
  SERVICE_DATABASE_URL: "postgres://writ@127.0.0.1:5432/writ",
  SERVICE_POLICIES_ROOT: join(import.meta.dirname, "../../../policies"),
};

describe("SERVICE_PROCESSES", () => {
  it("is 1 when unset, a count from 1 to 64, or `auto`: the usable cores", () => {
    expect(processCount({})).toBe(1);
    expect(processCount({ SERVICE_PROCESSES: "1" })).toBe(1);
    expect(processCount({ SERVICE_PROCESSES: "64" })).toBe(64);
    expect(processCount({ SERVICE_PROCESSES: "auto" }, () => 6)).toBe(6);
    expect(processCount({ SERVICE_PROCESSES: "auto" }, () => 96)).toBe(64);
    for (const bad of ["0", "65", "-1", "two", "1.5"]) {
      expect(() => processCount({ SERVICE_PROCESSES: bad })).toThrow(
        new ConfigError(`SERVICE_PROCESSES must be \`auto\` or an integer from 1 to 64, not \`${bad}\``),
      );
    }
  });

  it("a process's index is the supervisor's WRIT_SIDECAR_PROCESS, within the count; none in a sidecar of one process", () => {
    expect(processIndex({ WRIT_SIDECAR_PROCESS: "1" }, 2)).toBe(1);
    expect(processIndex({}, 2)).toBeNull();
    expect(processIndex({ WRIT_SIDECAR_PROCESS: "0" }, 1)).toBeNull();
    expect(() => processIndex({ WRIT_SIDECAR_PROCESS: "2" }, 2)).toThrow(/`2` is not one of 0 to 1/);
  });

  it("is taken on PostgreSQL and on an LMDB data dir; refused above 1 with the memory replay store and in development mode, saying why", () => {
    expect(loadConfig({ ...POSTGRES, SERVICE_PROCESSES: "3" }).processes).toEqual({ count: 3, index: null });
    expect(loadConfig({ ...POSTGRES, SERVICE_PROCESSES: "3", WRIT_SIDECAR_PROCESS: "2" }).processes).toEqual({ count: 3, index: 2 });
    const { SERVICE_STORE: _, SERVICE_DATABASE_URL: __, ...lmdb } = POSTGRES;
    expect(loadConfig({ ...lmdb, SERVICE_DATA_DIR: tmpdir(), SERVICE_PROCESSES: "2" }).processes).toEqual({ count: 2, index: null });
    expect(() => loadConfig({ ...lmdb, SERVICE_DATA_DIR: tmpdir(), SERVICE_REPLAY_STORE: "memory", SERVICE_PROCESSES: "2" })).toThrow(
      /^SERVICE_PROCESSES is 2, but the development memory replay store is one process's \(SERVICE_REPLAY_STORE=memory\): an execution could be consumed once in each; set SERVICE_REPLAY_STORE=lmdb$/,
    );
    expect(() => loadConfig({ ...POSTGRES, SERVICE_PROCESSES: "2" }, { dev: true })).toThrow(
      "SERVICE_PROCESSES is 2, but development mode (--dev) runs one process, which makes its keys",
    );
  });

  it("shares the usable cores out for the signing threads' `auto`", () => {
    // 8 usable cores: one process has two threads; two have four cores each, two threads each; four have two, none.
    expect(autoSigningThreads(coresPerProcess(8, 1))).toBe(2);
    expect(autoSigningThreads(coresPerProcess(8, 2))).toBe(2);
    expect(autoSigningThreads(coresPerProcess(8, 4))).toBe(0);
    expect(coresPerProcess(2, 4)).toBe(1);
    // As many processes as usable cores: a core each, so no thread, whatever this machine has.
    const config = loadConfig({ ...POSTGRES, SERVICE_PROCESSES: "auto", SERVICE_SIGNING_THREADS: "auto" });
    expect(config.processes.count).toBe(Math.min(usableCores(), 64));
    expect(config.signingThreads).toBe(0);
  });
});

describe("the instance id of each process (PostgreSQL)", () => {
  it("process 0 keeps the sidecar's id, process i takes `<id>-p<i>`, and one over 128 characters is refused", async () => {
    expect(await fleetInstanceId("edge-7", null, null)).toEqual({ id: "edge-7", source: "SERVICE_INSTANCE_ID" });
    expect(await fleetInstanceId("edge-7", null, 0)).toEqual({ id: "edge-7", source: "SERVICE_INSTANCE_ID" });
    expect(await fleetInstanceId("edge-7", null, 3)).toEqual({ id: "edge-7-p3", source: "SERVICE_INSTANCE_ID, process 3" });
    await expect(fleetInstanceId("x".repeat(126), null, 1)).rejects.toThrow(/over 128 characters: set a shorter SERVICE_INSTANCE_ID/);
    const dir = await mkdtemp(join(tmpdir(), "writ-processes-"));
    try {
      const kept = await fleetInstanceId(null, dir, 0);
      expect(await fleetInstanceId(null, dir, 1)).toEqual({ id: `${kept.id}-p1`, source: `${kept.source}, process 1` });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
