/**
 * `@writ/wire/types`: the wire's types alone, for the runtime, which builds and verifies these bodies and loads no
 * TypeBox. It imports this entry with `import type` only (.dependency-cruiser.cjs); its built module is empty, and a
 * value named through it is a type error.
 */
export type * from "./index.js";
