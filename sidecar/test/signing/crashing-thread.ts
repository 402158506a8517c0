/**
 * The signing thread's script (src/signing/worker.ts) with a fault on cue, for the pool's and the sidecar's tests: a
 * batch holding the bytes `crash-exit` ends the thread (process.exit in a worker ends the thread alone), one holding
 * `crash-throw` throws out of the message handler; both before the batch is signed, so its requests are held when
 * the thread dies.
 */
import { createRequire } from "node:module";
import { parentPort } from "node:worker_threads";
import type { ToSigningThread } from "../../src/signing/protocol.js";

const EXIT = Buffer.from("crash-exit");
const THROW = Buffer.from("crash-throw");

const port = parentPort!;
const on = port.on.bind(port);
port.on = ((event: string, listener: (message: ToSigningThread) => void) =>
  on(event, (message: ToSigningThread) => {
    if (message.kind === "batch") {
      const inputs = Buffer.from(message.inputs);
      if (inputs.includes(EXIT)) process.exit(3);
      if (inputs.includes(THROW)) throw new Error("a signing thread's fault, on cue");
    }
    listener(message);
  })) as typeof port.on;

// Run as the pool runs a script from the sources (compiled by tsx's require hook): `require`, after the patch.
createRequire(import.meta.url)("../../src/signing/worker.ts");
