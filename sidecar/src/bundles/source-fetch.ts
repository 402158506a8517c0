/**
 * One GET of a remote bundle source (docs/bundles.md, "Serving from a sidecar"), with every limit a file server the
 * sidecar does not control needs: a timeout for the whole exchange, a cap on the body, and `If-None-Match` so an
 * unchanged index costs a 304.
 */
import { Agent, errors, request } from "undici";

export type SourceAnswer =
  { readonly changed: false } | { readonly changed: true; readonly bytes: Uint8Array; readonly etag: string | null };

/** Why a fetch failed, for the operator: never the URL's credentials or query (a signed URL is a secret). */
export class SourceFetchError extends Error {
  override readonly name = "SourceFetchError";
}

export interface SourceFetchOptions {
  /** The whole exchange (connect, headers, body) must finish within it. */
  readonly timeoutMs: number;
  readonly maxBytes: number;
  /** The ETag of the copy held: answered 304 when it is still current. */
  readonly etag?: string | null;
}

/** One connection pool per source, closed with it. */
export function sourceAgent(timeoutMs: number): Agent {
  return new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 4_000 });
}

/** What a log may say of a URL: its origin and path, never its credentials or query. */
export function displayUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** @throws SourceFetchError */
export async function fetchFromSource(agent: Agent, url: URL, options: SourceFetchOptions): Promise<SourceAnswer> {
  const where = displayUrl(url);
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.etag) headers["if-none-match"] = options.etag;
  try {
    const answer = await request(url, { dispatcher: agent, headers, signal: AbortSignal.timeout(options.timeoutMs) });
    if (answer.statusCode === 304) {
      await answer.body.dump();
      return { changed: false };
    }
    if (answer.statusCode !== 200) {
      await answer.body.dump();
      throw new SourceFetchError(`\`${where}\` answered ${answer.statusCode}`);
    }
    const declared = Number(answer.headers["content-length"] ?? Number.NaN);
    if (declared > options.maxBytes) {
      await answer.body.dump().catch(() => undefined);
      throw new SourceFetchError(`\`${where}\` is ${declared} bytes; at most ${options.maxBytes} are read`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of answer.body) {
      size += (chunk as Buffer).length;
      if (size > options.maxBytes) {
        answer.body.destroy();
        throw new SourceFetchError(`\`${where}\` is larger than ${options.maxBytes} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
    const etag = answer.headers["etag"];
    return { changed: true, bytes: new Uint8Array(Buffer.concat(chunks)), etag: typeof etag === "string" ? etag : null };
  } catch (e) {
    if (e instanceof SourceFetchError) throw e;
    if (e instanceof DOMException && e.name === "TimeoutError")
      throw new SourceFetchError(`\`${where}\` did not answer within ${options.timeoutMs} ms`);
    if (e instanceof errors.UndiciError) throw new SourceFetchError(`\`${where}\` cannot be fetched: ${e.message}`);
    const code = typeof e === "object" && e !== null ? (e as { code?: unknown }).code : undefined;
    throw new SourceFetchError(
      `\`${where}\` cannot be fetched (${typeof code === "string" ? code : e instanceof Error ? e.message : String(e)})`,
    );
  }
}
