import { CliError } from "./io.js";

/**
 * `writ playground`'s defaults and `--port`, apart from the server (commands/playground.ts): the usage text and the
 * argument parsing need them, and neither should load the server to get them.
 */
export const DEFAULT_PLAYGROUND_PORT = 8088;
export const DEFAULT_PLAYGROUND_HOST = "127.0.0.1";

/** `--port`: an integer from 0 (a free port) to 65535. */
export function parsePort(text: string | undefined): number {
  if (text === undefined) return DEFAULT_PLAYGROUND_PORT;
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new CliError(`playground: --port must be a port number from 0 to 65535, given \`${text}\``);
  return port;
}
