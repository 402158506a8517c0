/**
 * The seven npm packages of writ and how they are packed: `npm pack` of each workspace, as built, into one folder.
 * Each tarball installs alone (test/packaging.stress.test.ts): a package's tsup build bundles the writ packages it uses.
 */
import { execFileSync } from "node:child_process";

/** The workspaces published to npm, as `@writ/<name>`; the playground and the VS Code extension are not. */
export const PACKAGES = ["runtime", "wire", "compiler", "language-server", "sidecar", "sdk", "conformance"] as const;

/** One entry of `npm pack --json`. */
export interface Packed {
  readonly name: string;
  readonly version: string;
  readonly filename: string;
  /** Bytes of the tarball. */
  readonly size: number;
  readonly unpackedSize: number;
  readonly files: readonly { readonly path: string }[];
}

/** Packs every package of `root` into `destination`, an existing folder. */
export function packAll(root: string, destination: string, env: NodeJS.ProcessEnv = process.env): Packed[] {
  const workspaces = PACKAGES.flatMap((ws) => ["--workspace", ws]);
  // --loglevel=warn: without it npm lists every file of every tarball on stderr.
  const json = execFileSync("npm", ["pack", "--json", "--loglevel=warn", "--pack-destination", destination, ...workspaces], {
    cwd: root,
    env,
    encoding: "utf8",
  });
  return JSON.parse(json) as Packed[];
}
