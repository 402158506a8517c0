import pkg from "../package.json";

/** Recorded in every bundle manifest, so a bundle says which compiler made it. */
export const COMPILER = { name: "writ", version: pkg.version } as const;
