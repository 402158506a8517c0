/**
 * SERVICE_DATABASE_URL read as libpq reads a connection URL, several hosts included
 * (`postgresql://user:pw@db1:5432,db2:5432/writ?target_session_attrs=read-write`, docs/fleet.md "Failover"): node-postgres
 * takes one host only, so each host is handed to it as a URL of its own, the same URL with that host alone. Read without
 * loading `pg`, at start-up with the rest of the configuration.
 *
 * A URL with one host is kept exactly as written (it is what node-postgres already reads); only its
 * `target_session_attrs` is read here. Errors name the variable and the position of a host, never the URL: it may hold
 * a password.
 */
import { ConfigError } from "../../../env.js";

/** The session attributes a host must have to be used (libpq's `target_session_attrs`, the values supported here). */
export const TARGET_SESSION_ATTRS = ["any", "read-write", "primary"] as const;
export type TargetSessionAttrs = (typeof TARGET_SESSION_ATTRS)[number];

/** The port of a host written without one, as libpq's default. */
export const DEFAULT_PORT = 5432;

export interface DatabaseHost {
  /** The host name or address, an IPv6 address without its brackets. */
  readonly host: string;
  /** Null when the URL gives none (DEFAULT_PORT in a URL of several hosts). */
  readonly port: number | null;
  /** The URL of this host alone, everything else as written: what node-postgres connects with. */
  readonly url: string;
}

export interface DatabaseTargets {
  /** In the URL's order, the order they are tried in. */
  readonly hosts: readonly DatabaseHost[];
  readonly targetSessionAttrs: TargetSessionAttrs;
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
/** One host of a list: a name or IPv4 address, or an IPv6 address in brackets; then an optional port. */
const HOST = /^(?:\[([0-9A-Fa-f:.]+)\]|([^[\]:/?#@,\s]+))(?::(\d{1,5}))?$/;
/** Query parameters that name a host themselves: with several hosts in the URL, which would win is unclear. */
const HOST_PARAMETERS = ["host", "hostaddr", "port"];

/**
 * The hosts of `url` and the session attribute asked of them. `variable` names the setting in errors.
 * @throws ConfigError
 */
export function parseDatabaseUrl(url: string, variable = "SERVICE_DATABASE_URL"): DatabaseTargets {
  const scheme = SCHEME.exec(url);
  if (scheme === null) {
    throw new ConfigError(
      `${variable} is not a URL (expected postgresql://user@host:5432/database, or with several hosts postgresql://user@host1:5432,host2:5432/database)`,
    );
  }
  const protocol = scheme[1]!.toLowerCase();
  if (protocol !== "postgresql" && protocol !== "postgres")
    throw new ConfigError(`${variable} must be a postgresql:// URL, not ${protocol}://…`);
  const rest = url.slice(scheme[0].length);
  const authorityEnd = rest.search(/[/?#]/);
  const authority = authorityEnd === -1 ? rest : rest.slice(0, authorityEnd);
  const tail = authorityEnd === -1 ? "" : rest.slice(authorityEnd);
  const at = authority.lastIndexOf("@");
  const userinfo = authority.slice(0, at + 1);
  const hostList = authority.slice(at + 1);
  const query = queryParameters(tail);
  const targetSessionAttrs = sessionAttrs(query, variable);

  if (!hostList.includes(",")) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigError(`${variable} is not a URL (expected postgresql://user@host:5432/database)`);
    }
    const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
    return { hosts: [{ host, port: parsed.port === "" ? null : Number(parsed.port), url }], targetSessionAttrs };
  }

  const named = HOST_PARAMETERS.find((name) => query.has(name));
  if (named !== undefined)
    throw new ConfigError(`${variable} lists several hosts and also sets \`${named}\`: give every host and port in the host list`);
  const hosts = hostList.split(",").map((entry, i): DatabaseHost => {
    const match = HOST.exec(entry);
    const port = match?.[3] === undefined ? null : Number(match[3]);
    if (match === null || port === 0 || (port !== null && port > 65_535)) {
      throw new ConfigError(
        `${variable}: host ${i + 1} of its host list is ${entry === "" ? "empty" : "not a host[:port]"} (expected host1:5432,host2:5432, an IPv6 address in brackets)`,
      );
    }
    const single = `${protocol}://${userinfo}${entry}${tail}`;
    try {
      new URL(single);
    } catch {
      throw new ConfigError(`${variable}: host ${i + 1} of its host list does not make a URL with the rest of it`);
    }
    return { host: match[1] ?? match[2]!, port, url: single };
  });
  return { hosts, targetSessionAttrs };
}

/** `host:port` for messages (an IPv6 address in brackets), with the port a connection uses. */
export function hostLabel(host: DatabaseHost): string {
  return `${host.host.includes(":") ? `[${host.host}]` : host.host}:${host.port ?? DEFAULT_PORT}`;
}

/**
 * The URL without its password, for logs and errors: credentials are never printed, neither the userinfo's nor a
 * `password` query parameter (node-postgres reads both). A URL `parseDatabaseUrl` refuses is not shown at all.
 */
export function redactedUrl(url: string): string {
  try {
    parseDatabaseUrl(url);
  } catch {
    return "(unparsable URL)";
  }
  const scheme = SCHEME.exec(url)![0];
  const rest = url.slice(scheme.length).replace(/([?&]password=)[^&#]*/gi, "$1***");
  const authorityEnd = rest.search(/[/?#]/);
  const authority = authorityEnd === -1 ? rest : rest.slice(0, authorityEnd);
  const at = authority.lastIndexOf("@");
  const colon = authority.slice(0, Math.max(at, 0)).indexOf(":");
  if (at === -1 || colon === -1 || colon === at - 1) return `${scheme}${rest}`;
  return `${scheme}${authority.slice(0, colon)}:***${rest.slice(at)}`;
}

/** The query string's parameters, decoded as node-postgres decodes them. */
function queryParameters(tail: string): URLSearchParams {
  const start = tail.indexOf("?");
  if (start === -1) return new URLSearchParams();
  const end = tail.indexOf("#", start);
  return new URLSearchParams(tail.slice(start + 1, end === -1 ? undefined : end));
}

function sessionAttrs(query: URLSearchParams, variable: string): TargetSessionAttrs {
  const value = query.get("target_session_attrs");
  if (value === null) return "any";
  if ((TARGET_SESSION_ATTRS as readonly string[]).includes(value)) return value as TargetSessionAttrs;
  throw new ConfigError(
    `${variable}: target_session_attrs must be one of ${TARGET_SESSION_ATTRS.map((a) => `\`${a}\``).join(", ")}, not \`${value}\``,
  );
}
