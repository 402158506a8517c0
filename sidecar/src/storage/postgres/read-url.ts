/**
 * The read database of a sidecar on PostgreSQL (docs/fleet.md, "Read replicas"): SERVICE_DATABASE_READ_URL, or the
 * file SERVICE_DATABASE_READ_URL_FILE names, never both; optional. Usually a hot standby of the primary; the reads that
 * scan the trail's history go there (read-pool.ts), every other statement to SERVICE_DATABASE_URL. Read without loading
 * `pg`, at start-up with the rest of the configuration.
 */
import { readFileSync } from "node:fs";
import { ConfigError, path, text, type Env } from "../../env.js";

const INLINE = "SERVICE_DATABASE_READ_URL";
const FILE = "SERVICE_DATABASE_READ_URL_FILE";

/** The variables of the read database: only the PostgreSQL engine reads them (refused with another SERVICE_STORE). */
export const READ_URL_VARIABLES = [INLINE, FILE] as const;

/**
 * The read database's `postgresql://…` URL, or null when neither variable is set. A secret (it may hold a password):
 * errors name the variable, never the value.
 * @throws ConfigError
 */
export function readDatabaseUrl(env: Env, cwd: string): string | null {
  const inline = text(env, INLINE);
  const file = path(text(env, FILE), cwd);
  if (inline !== undefined && file !== null) throw new ConfigError(`${INLINE} and ${FILE} are both set; choose one`);
  if (inline === undefined && file === null) return null;
  const source = file === null ? INLINE : `${FILE}'s content`;
  const url = file === null ? inline!.trim() : fileContent(file);
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new ConfigError(`${source} is not a URL (expected postgresql://user@replica:5432/database)`);
  }
  if (protocol !== "postgresql:" && protocol !== "postgres:") {
    throw new ConfigError(`${source} must be a postgresql:// URL, not ${protocol}//…`);
  }
  return url;
}

function fileContent(file: string): string {
  let content: string;
  try {
    content = readFileSync(file, "utf8").trim();
  } catch (e) {
    throw new ConfigError(`cannot read ${FILE} \`${file}\`: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (content === "") throw new ConfigError(`${FILE} \`${file}\` is empty`);
  return content;
}
