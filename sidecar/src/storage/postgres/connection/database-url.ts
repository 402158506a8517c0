/**
 * The URLs of a sidecar's databases on PostgreSQL (docs/fleet.md): each from its variable or the file its `_FILE`
 * variable names (one line, mode 0600 advised), never both; validated as libpq reads a URL, several hosts included
 * (hosts.ts). Read without loading `pg`, at start-up with the rest of the configuration. A URL is a secret (it may hold
 * a password): errors name the variable, never the value.
 *
 * - SERVICE_DATABASE_URL(_FILE): the database every statement goes to but the reads below; required (config.ts).
 * - SERVICE_DATABASE_READ_URL(_FILE): the read database, optional, usually a hot standby of the primary; the reads
 *   that scan the trail's history go there (read-pool.ts).
 */
import { readFileSync } from "node:fs";
import { ConfigError, path, text, type Env } from "../../../env.js";
import { parseDatabaseUrl } from "./hosts.js";

const READ_INLINE = "SERVICE_DATABASE_READ_URL";
const READ_FILE = "SERVICE_DATABASE_READ_URL_FILE";

/** The variables of the read database: only the PostgreSQL engine reads them (refused with another SERVICE_STORE). */
export const READ_URL_VARIABLES = [READ_INLINE, READ_FILE] as const;

/**
 * The URL `inline` holds or the file `file` names; null when neither variable is set.
 * @throws ConfigError
 */
export function databaseUrlFrom(env: Env, cwd: string, inline: string, file: string): string | null {
  const value = text(env, inline);
  const named = path(text(env, file), cwd);
  if (value !== undefined && named !== null) throw new ConfigError(`${inline} and ${file} are both set; choose one`);
  if (value === undefined && named === null) return null;
  const url = named === null ? value!.trim() : fileContent(file, named);
  parseDatabaseUrl(url, named === null ? inline : `${file}'s content`);
  return url;
}

/**
 * The read database's `postgresql://…` URL, or null when neither variable is set.
 * @throws ConfigError
 */
export function readDatabaseUrl(env: Env, cwd: string): string | null {
  return databaseUrlFrom(env, cwd, READ_INLINE, READ_FILE);
}

function fileContent(variable: string, file: string): string {
  let content: string;
  try {
    content = readFileSync(file, "utf8").trim();
  } catch (e) {
    throw new ConfigError(`cannot read ${variable} \`${file}\`: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (content === "") throw new ConfigError(`${variable} \`${file}\` is empty`);
  return content;
}
