/**
 * The instance id of a sidecar on the PostgreSQL store: the name of its audit record log in the fleet's database
 * (docs/audit.md, "One log per sidecar instance"). It must stay the same across restarts, or a restarted sidecar starts
 * a new log (the old one stays readable, and is taken over by another sidecar once stale). In order:
 * `SERVICE_INSTANCE_ID`; the id kept in the data dir (`instance-id`, made once); the host name, made a log id. Of a
 * sidecar's several processes (SERVICE_PROCESSES), the first keeps that id and process i takes `<id>-p<i>`.
 * (On LMDB the instance id is kept in the data dir's environment: storage/lmdb/record-log-storage.ts.)
 */
import { randomUUID } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { LOG_ID_PATTERN } from "@writ/runtime";
import { ConfigError } from "../env.js";
import { FILE_MODE, preparePrivateDir } from "./data-dir.js";

export const INSTANCE_ID_FILE = "instance-id";

export async function fleetInstanceId(
  configured: string | null,
  dataDir: string | null,
  processIndex: number | null = null,
): Promise<{ readonly id: string; readonly source: string }> {
  const base = await baseInstanceId(configured, dataDir);
  if (processIndex === null || processIndex === 0) return base;
  const id = `${base.id}-p${processIndex}`;
  if (!LOG_ID_PATTERN.test(id))
    throw new ConfigError(`process ${processIndex}'s instance id \`${id}\` is over 128 characters: set a shorter SERVICE_INSTANCE_ID`);
  return { id, source: `${base.source}, process ${processIndex}` };
}

async function baseInstanceId(
  configured: string | null,
  dataDir: string | null,
): Promise<{ readonly id: string; readonly source: string }> {
  if (configured !== null) return { id: configured, source: "SERVICE_INSTANCE_ID" };
  if (dataDir !== null) return { id: await keptInstanceId(dataDir), source: `${join(dataDir, INSTANCE_ID_FILE)}` };
  const host = hostname()
    .replace(/[^A-Za-z0-9._:-]/g, "-")
    .slice(0, 128);
  if (!LOG_ID_PATTERN.test(host))
    throw new ConfigError("the host name cannot name this sidecar's audit record log: set SERVICE_INSTANCE_ID");
  return { id: host, source: "the host name (set SERVICE_INSTANCE_ID where host names change across restarts)" };
}

/** The id in `<dataDir>/instance-id`, written (owner-only, never overwritten) at the first start. */
async function keptInstanceId(dataDir: string): Promise<string> {
  const file = join(dataDir, INSTANCE_ID_FILE);
  const read = async (): Promise<string | null> => {
    try {
      return (await readFile(file, "utf8")).trim();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    }
  };
  let id = await read();
  if (id === null) {
    await preparePrivateDir(dataDir);
    // `wx`: two sidecars starting on one data dir at once keep the first id written.
    await writeFile(file, `${randomUUID()}\n`, { flag: "wx", mode: FILE_MODE }).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== "EEXIST") throw e;
    });
    id = await read();
  }
  if (id === null || !LOG_ID_PATTERN.test(id))
    throw new ConfigError(`${file} does not hold an instance id: remove it to make a new one, or set SERVICE_INSTANCE_ID`);
  return id;
}
