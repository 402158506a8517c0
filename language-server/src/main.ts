import process from "node:process";
import { createConnection, ProposedFeatures } from "vscode-languageserver/node";
import pkg from "../package.json";
import { SERVER_NAME, startServer } from "./server.js";

const USAGE = `usage: ${SERVER_NAME} --stdio | --node-ipc | --socket=PORT | --pipe=NAME`;
const TRANSPORT = /^--(stdio|node-ipc|socket|pipe)(=|$)/;

/**
 * `writ-language-server --stdio` (or `--node-ipc`, `--socket=PORT`, `--pipe=NAME`): serves the transport that
 * the process's arguments name, as vscode-languageserver reads them. Returns an exit code when it does not
 * serve (`--version`, `--help`, no transport), null when it does.
 */
export function serveFromCommandLine(err: (line: string) => void, out: (line: string) => void): number | null {
  const argv = process.argv.slice(2);
  if (argv.includes("--version") || argv.includes("-V")) {
    out(pkg.version);
    return 0;
  }
  if (argv.includes("--help") || argv.includes("-h")) {
    out(USAGE);
    return 0;
  }
  if (!argv.some((a) => TRANSPORT.test(a))) {
    err(`${SERVER_NAME}: no transport given\n${USAGE}`);
    return 2;
  }
  startServer(createConnection(ProposedFeatures.all));
  return null;
}
