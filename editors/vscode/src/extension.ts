import type { ExtensionContext } from "vscode";
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from "vscode-languageclient/node";

let client: LanguageClient | undefined;

/** Starts the bundled writ language server (dist/server.cjs) for `.writ` files. */
export async function activate(context: ExtensionContext): Promise<void> {
  const module = context.asAbsolutePath("dist/server.cjs");
  const server: ServerOptions = {
    run: { module, transport: TransportKind.ipc },
    debug: { module, transport: TransportKind.ipc, options: { execArgv: ["--nolazy", "--inspect=6009"] } },
  };
  const options: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "writ" },
      { scheme: "untitled", language: "writ" },
    ],
  };
  client = new LanguageClient("writ", "writ language server", server, options);
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
