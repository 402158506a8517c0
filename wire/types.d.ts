// `@writ/wire/types` (src/types.ts): the types of the wire alone; its module, dist/types.js, is empty.
export type * from "./dist/index.js";
