import { LmdbReplayStore } from "@writ/runtime/lmdb";
import { LmdbAuditLog } from "../../../src/storage/lmdb/audit-log.js";
import { auditLogContract } from "../../audit/audit-contract.js";
import { tempEnv } from "../../audit/support.js";

for (const compressRecords of [false, true]) {
  auditLogContract(compressRecords ? "LmdbAuditLog with compressed decision records" : "LmdbAuditLog", async () => {
    const env = await tempEnv();
    const log = new LmdbAuditLog(env.root, { compressRecords });
    const replay = log.recording(new LmdbReplayStore(env.root));
    return {
      log,
      replay,
      dispose: async () => {
        await log.close();
        await replay.close();
        await env.dispose();
      },
    };
  });
}
