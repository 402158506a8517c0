// Opens many idle TCP connections to one server and holds them (idle-connections.stress.test.ts), in a process of
// its own so its file descriptors do not count against the test's. Usage: node idle-holder.mjs <port> <count>.
// Half of the connections send one keep-alive request first, then stay idle; the others never send a byte.
// Prints `opened <n> failed <m>` when every attempt settled, then `open <n>` for each line read on stdin.
import { connect } from "node:net";
import { createInterface } from "node:readline";

const [port, count] = process.argv.slice(2).map(Number);
const IN_PROGRESS = 256;
let open = 0;
let opened = 0;
let failed = 0;
let next = 0;

function one() {
  return new Promise((resolve) => {
    const i = next++;
    const socket = connect({ host: "127.0.0.1", port });
    let counted = false;
    socket.on("connect", () => {
      counted = true;
      open += 1;
      opened += 1;
      if (i % 2 === 0) socket.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
      resolve();
    });
    socket.on("data", () => undefined);
    socket.on("error", () => undefined);
    socket.on("close", () => {
      if (counted) open -= 1;
      else {
        failed += 1;
        resolve();
      }
    });
  });
}

async function worker() {
  while (next < count) await one();
}
await Promise.all(Array.from({ length: IN_PROGRESS }, worker));
process.stdout.write(`opened ${opened} failed ${failed}\n`);
createInterface({ input: process.stdin }).on("line", () => process.stdout.write(`open ${open}\n`));
