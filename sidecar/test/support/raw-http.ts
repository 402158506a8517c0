/**
 * Raw HTTP/1.1 over a TCP socket, for what an HTTP client library will not send: duplicate headers, bare LF, a bad
 * Content-Length, CONNECT, an unknown Expect.
 */
import { connect } from "node:net";

/** Sends `text` to the server at `url` and resolves with everything it answers until it closes the connection. */
export function rawRequest(url: string, text: string, timeoutMs = 5_000): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no end of the answer within ${timeoutMs} ms; so far: ${Buffer.concat(chunks).toString("latin1").slice(0, 300)}`));
    }, timeoutMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", (error) => {
      clearTimeout(timer);
      // A reset after the answer was read still answered.
      if (chunks.length > 0) resolve(Buffer.concat(chunks).toString("latin1"));
      else reject(error);
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString("latin1"));
    });
    socket.write(text, "latin1");
  });
}

/** The status code and the body of a raw answer. */
export function parseRaw(answer: string): { readonly status: number; readonly body: string } {
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1] ?? Number.NaN);
  return { status, body: answer.slice(answer.indexOf("\r\n\r\n") + 4) };
}
