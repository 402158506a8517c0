/**
 * Where an audit record of the LMDB trail lives, as one string (a locator), and the kind of entry it is in the
 * tamper-evident record log (docs/audit.md, "Tamper evidence"). A locator names the record's database and key:
 *
 * - `d:<ms>:<fingerprint>` a decision (`audit-decision-records`, key [ms, fingerprint]);
 * - `o:<fingerprint>` its override, `c:<fingerprint>` its confirmation (`audit-decisions`, key fingerprint + suffix);
 * - `v:<ms>:<ordinal>` a verification, `s:<ms>:<ordinal>` a security event (key [ms, ordinal]);
 * - `p:<ms>:<ordinal>` a prune note (`audit-log-prunes`): the positions retention removed.
 */
export type LogKind = "decision" | "override" | "confirmation" | "verification" | "security" | "prune";

export const LOCATOR_KIND: Readonly<Record<string, LogKind>> = {
  d: "decision",
  o: "override",
  c: "confirmation",
  v: "verification",
  s: "security",
  p: "prune",
};

export const locators = {
  decision: (ms: number, fingerprint: string) => `d:${ms}:${fingerprint}`,
  override: (fingerprint: string) => `o:${fingerprint}`,
  confirmation: (fingerprint: string) => `c:${fingerprint}`,
  verification: (ms: number, ordinal: number) => `v:${ms}:${ordinal}`,
  security: (ms: number, ordinal: number) => `s:${ms}:${ordinal}`,
  prune: (ms: number, ordinal: number) => `p:${ms}:${ordinal}`,
} as const;

/** A locator's parts: its kind and the key fields after the prefix. */
export function parseLocator(locator: string): { readonly kind: LogKind; readonly fields: readonly string[] } {
  const [prefix, ...fields] = locator.split(":");
  const kind = LOCATOR_KIND[prefix ?? ""];
  if (kind === undefined) throw new Error(`not a record locator: \`${locator}\``);
  return { kind, fields };
}
