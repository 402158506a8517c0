/** @writ/language-server: the writ language over the Language Server Protocol. */
export { startServer, SERVER_NAME } from "./server.js";
export { serveFromCommandLine } from "./main.js";
