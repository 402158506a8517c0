/** Policy sources imported as text (the build's `.writ` loader). */
declare module "*.writ" {
  const text: string;
  export default text;
}

/** A file imported as its text (`?raw`: the build's raw loader, playground/tsup.config.ts). */
declare module "*?raw" {
  const text: string;
  export default text;
}
