import type { CliIo } from "./io.js";

/**
 * What already holds a version at a destination: a bundle with its `bundle_hash`, or something that cannot be read
 * (`unreadable` says why, as a clause: "its `bundle.manifest.json` is not valid JSON").
 */
export type Occupant = { readonly bundleHash: string } | { readonly unreadable: string };

/**
 * Whether to replace `ref` (`policyId@version`) at `where`, which already holds `occupant` with other content.
 *
 * INVARIANT (a version is immutable): what is written under a version (a bundle directory, an archive, a source index
 * entry) is never replaced by other content without --force, and never silently: without `force` this prints the one
 * line of the refusal and returns false; with it, a warning, and returns true.
 */
export function mayReplace(io: CliIo, ref: string, where: string, occupant: Occupant, newHash: string, force: boolean): boolean {
  if (!force) {
    const held =
      "bundleHash" in occupant ? `with a different bundle_hash (\`${short(occupant.bundleHash)}\`)` : `but ${occupant.unreadable}`;
    io.err(
      `error: \`${ref}\` already exists in \`${where}\` ${held}: a version is immutable; bump \`version\`, or pass --force to overwrite`,
    );
    return false;
  }
  const held = "bundleHash" in occupant ? `bundle_hash \`${short(occupant.bundleHash)}\`` : occupant.unreadable;
  io.err(
    `warning: --force: overwriting \`${ref}\` in \`${where}\` (${held}) with bundle_hash \`${short(newHash)}\`: whoever has the old bundle holds another under the same version`,
  );
  return true;
}

/** A `bundle_hash` as the CLI shows it in a line of prose: its first 16 hex digits. */
export function short(hash: string): string {
  return `${hash.slice(0, 16)}…`;
}
