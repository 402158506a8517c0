/** An audit trail that holds nothing, for opening an LMDB record log on its own (storage/lmdb/record-log-storage.ts). */
import type { LoggedTrail } from "../../src/storage/lmdb/record-log-storage.js";

export const EMPTY_TRAIL: LoggedTrail = {
  raw: () => undefined,
  prefetch: async () => undefined,
  storedCount: () => 0,
  stored: () => [],
  decisionLocator: async () => undefined,
};
