import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { LmdbTrustRecordStore, SURFACE_B_DATABASES } from "../../../src/storage/lmdb/record-store.js";
import { trustRecordStoreContract } from "../../surface-b/record-store-contract.js";

trustRecordStoreContract("LmdbTrustRecordStore", async () => {
  const dir = await mkdtemp(join(tmpdir(), "writ-records-"));
  const root = open({ path: dir, maxDbs: 32 });
  return {
    store: new LmdbTrustRecordStore(root),
    corrupt: async (id, text) => {
      await root.openDB<string, string>(SURFACE_B_DATABASES.records, { encoding: "string" }).put(id, text);
      const order = root.openDB<string, number>(SURFACE_B_DATABASES.order, { encoding: "string" });
      await order.put(0, id);
    },
    dispose: async () => {
      await root.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
