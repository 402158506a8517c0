/**
 * Records of the LMDB trail are stored as their JSON text in UTF-8, encoded once by the trail: the bytes its
 * databases' JSON encoding would write (so `get` decodes them as before), and the bytes the record log's leaf hashes
 * (runtime `entryLeafHash`), with no second serialization.
 */
import { asBinary } from "lmdb";

/** A record's stored bytes: UTF-8 of its JSON text. */
export function encoded(record: object): Buffer {
  return Buffer.from(JSON.stringify(record), "utf8");
}

/** `bytes` as a value to `put`, written as they are (lmdb-js `asBinary`), whatever the database's encoding. */
export function asStored<V>(bytes: Uint8Array): V {
  return asBinary(bytes) as unknown as V;
}
