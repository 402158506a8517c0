/** Policy sources imported as text (the build's `.writ` loader). */
declare module "*.writ" {
  const text: string;
  export default text;
}
