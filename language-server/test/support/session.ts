import { spawn, type ChildProcess } from "node:child_process";
import { PassThrough } from "node:stream";
import { createConnection } from "vscode-languageserver/node";
import {
  createProtocolConnection,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  InitializedNotification,
  InitializeRequest,
  PublishDiagnosticsNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  type ClientCapabilities,
  type InitializeResult,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
  type TextDocumentContentChangeEvent,
} from "vscode-languageserver-protocol/node";
import { startServer } from "@writ/language-server";

/** An LSP client talking JSON-RPC to a writ language server, as an editor does. */
export interface Session {
  readonly client: ProtocolConnection;
  readonly initialized: InitializeResult;
  /** Opens a document and resolves with the diagnostics the server publishes for it. */
  open(uri: string, text: string): Promise<PublishDiagnosticsParams>;
  /** Changes a document to `version` and resolves with the diagnostics published for that version. */
  change(uri: string, version: number, changes: TextDocumentContentChangeEvent[]): Promise<PublishDiagnosticsParams>;
  close(): Promise<void>;
}

const DEFAULT_CAPABILITIES: ClientCapabilities = {
  textDocument: { publishDiagnostics: { relatedInformation: true }, hover: { contentFormat: ["markdown"] } },
};

/** The server in this process, over a pair of in-memory streams. */
export function inProcessSession(capabilities = DEFAULT_CAPABILITIES): Promise<Session> {
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  startServer(createConnection(new StreamMessageReader(toServer), new StreamMessageWriter(fromServer)));
  return connect(fromServer, toServer, capabilities, async () => {});
}

/** A server process, such as `writ-language-server --stdio`, over its standard input and output. */
export function spawnedSession(command: string, args: readonly string[]): Promise<Session> {
  const child: ChildProcess = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  return connect(child.stdout!, child.stdin!, DEFAULT_CAPABILITIES, async () => {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill();
    await exited;
  });
}

async function connect(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  capabilities: ClientCapabilities,
  stop: () => Promise<void>,
): Promise<Session> {
  const client = createProtocolConnection(input, output);
  const published: PublishDiagnosticsParams[] = [];
  const waiters: { uri: string; version: number; resolve: (p: PublishDiagnosticsParams) => void }[] = [];
  client.onNotification(PublishDiagnosticsNotification.type, (p) => {
    published.push(p);
    for (const w of waiters.filter((w) => w.uri === p.uri && w.version === p.version)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(p);
    }
  });
  const diagnosticsFor = (uri: string, version: number): Promise<PublishDiagnosticsParams> => {
    const already = published.find((p) => p.uri === uri && p.version === version);
    return already ? Promise.resolve(already) : new Promise((resolve) => waiters.push({ uri, version, resolve }));
  };
  client.listen();
  const initialized = await client.sendRequest(InitializeRequest.type, { processId: null, rootUri: null, capabilities });
  await client.sendNotification(InitializedNotification.type, {});
  return {
    client,
    initialized,
    open: async (uri, text) => {
      await client.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: "writ", version: 1, text } });
      return diagnosticsFor(uri, 1);
    },
    change: async (uri, version, contentChanges) => {
      await client.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version }, contentChanges });
      return diagnosticsFor(uri, version);
    },
    close: async () => {
      await client.sendRequest(ShutdownRequest.type);
      client.dispose();
      await stop();
    },
  };
}
