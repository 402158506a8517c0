/**
 * The `curl` that `npm start` prints for a first decision: POST /evaluate of examples/evaluate-request.json with the
 * key the sidecar was started with, named (the variable, or the development key's file), never printed.
 */
import { isAbsolute, join, relative } from "node:path";

/** The first of these that is set opens POST /evaluate, in the sidecar's order (sidecar/src/config.ts). */
const DECIDING_KEYS = ["SERVICE_API_KEY", "SERVICE_DECIDE_KEY"] as const;
const DEV_DATA_DIR = ".writ/data";
export const EXAMPLE_REQUEST = "examples/evaluate-request.json";

/** Single-quoted for a POSIX shell unless it needs no quotes. */
const shell = (word: string): string => (/^[\w./@:=-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);

export interface FirstDecision {
  /** Surface A, as the sidecar logged it. */
  readonly url: string;
  /** The repository root: the sidecar's working directory. */
  readonly root: string;
  /** Where the user typed `npm start` (INIT_CWD): paths are printed relative to it. */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

export function firstDecisionCurl({ url, root, cwd, env }: FirstDecision): string {
  const fromUser = (path: string): string => relative(cwd, isAbsolute(path) ? path : join(root, path)) || ".";
  const set = (name: string) => env[name] !== undefined && env[name] !== "";
  const variable = DECIDING_KEYS.find(set);
  const fileVariable = DECIDING_KEYS.map((name) => `${name}_FILE`).find(set);
  // Inside double quotes: the variable, or the file read by a command substitution (its own quoting context).
  const key =
    variable !== undefined
      ? `$${variable}`
      : `$(cat ${shell(fromUser(fileVariable !== undefined ? env[fileVariable]! : join(env["SERVICE_DATA_DIR"] || DEV_DATA_DIR, "api-key")))})`;
  return [
    `curl -s ${url}/evaluate`,
    `-H "authorization: Bearer ${key}"`,
    `-H 'content-type: application/json'`,
    `-d @${shell(fromUser(EXAMPLE_REQUEST))}`,
  ].join(" ");
}
