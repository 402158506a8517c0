import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { BundleError } from "../errors.js";

/**
 * The largest bundle file read (the manifest, `bundle.sig` and each file the manifest names). A compiled bundle's
 * files are kilobytes; a policy whose IR reached megabytes would be unreviewable. Anything larger is refused before a
 * byte of it is read, so a stray huge file in a bundle directory cannot exhaust the process's memory.
 */
export const MAX_BUNDLE_FILE_BYTES = 16 * 1024 * 1024;

/**
 * O_NONBLOCK: opening a FIFO for reading waits for a writer without it (forever, holding one of libuv's four
 * threads, which no timeout can take back). With it, the open returns at once and the fstat below refuses the FIFO.
 * For a regular file it changes nothing. Not defined on Windows, where no FIFO can stand in a directory.
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * The bytes of `dir/name`, or null when there is no such file.
 *
 * INVARIANT (a bundle read never blocks): only a regular file of at most MAX_BUNDLE_FILE_BYTES is read; a FIFO, a
 * socket, a device or a directory in its place is refused after a non-blocking open, before any read.
 * @throws BundleError (BUNDLE_INVALID) naming the file (never the server's directories) when it is not a regular
 *   file, is too large, or cannot be read; the AbortSignal's reason once `signal` is aborted
 */
export async function readBundleFile(dir: string, name: string, signal?: AbortSignal): Promise<Uint8Array | null> {
  signal?.throwIfAborted();
  let handle: FileHandle;
  try {
    handle = await open(join(dir, name), OPEN_FLAGS);
  } catch (e) {
    if (isMissing(e)) return null;
    throw unreadable(dir, name, e);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new BundleError("BUNDLE_INVALID", `\`${name}\` is not a regular file (${kindOf(stat)})`, dir);
    if (stat.size > MAX_BUNDLE_FILE_BYTES) {
      throw new BundleError(
        "BUNDLE_INVALID",
        `\`${name}\` has ${stat.size} bytes; a bundle file may have at most ${MAX_BUNDLE_FILE_BYTES}`,
        dir,
      );
    }
    return await readAll(handle, stat.size, dir, name, signal);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Exactly `size` bytes (what fstat said), or fewer when the file shrank meanwhile: the hashes that follow catch a
 * file changed under the reader, and a file that grew is not read past what was checked against the cap.
 */
async function readAll(handle: FileHandle, size: number, dir: string, name: string, signal?: AbortSignal): Promise<Uint8Array> {
  const bytes = new Uint8Array(size);
  let offset = 0;
  while (offset < size) {
    signal?.throwIfAborted();
    let read: number;
    try {
      ({ bytesRead: read } = await handle.read(bytes, offset, size - offset, offset));
    } catch (e) {
      throw unreadable(dir, name, e);
    }
    if (read === 0) break;
    offset += read;
  }
  return offset === size ? bytes : bytes.subarray(0, offset);
}

function unreadable(dir: string, name: string, e: unknown): BundleError {
  if (e instanceof BundleError) return e;
  // The errno code only: node's message names the full path, which is the server's business, not a client's.
  const code =
    typeof e === "object" && e !== null && typeof (e as { code?: unknown }).code === "string"
      ? (e as { code: string }).code
      : "unknown error";
  return new BundleError("BUNDLE_INVALID", `\`${name}\` cannot be read (${code})`, dir);
}

function kindOf(stat: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (stat.isDirectory()) return "a directory";
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isSocket()) return "a socket";
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return "a device";
  return "not a file";
}

/** ENOTDIR: a path component is a file, so there is no such bundle directory either. */
function isMissing(e: unknown): boolean {
  const code = typeof e === "object" && e !== null ? (e as { code?: unknown }).code : undefined;
  return code === "ENOENT" || code === "ENOTDIR";
}
