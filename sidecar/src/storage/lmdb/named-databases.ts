/** Which named databases an LMDB environment has, for readers that must not create one by opening it. */
import type { RootDatabase } from "lmdb";

/** Whether the environment has the named database `name`: a key of its main database (one read). */
export function hasDatabase(root: RootDatabase, name: string): boolean {
  for (const key of root.getKeys({ start: name, limit: 1 })) return key === name;
  return false;
}
