/** The checks' HTTP: JSON requests to a sidecar, and the JSON values curl printed one after another. */

export interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

export async function request(method: "GET" | "POST", url: string, apiKey: string | null, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
  if (apiKey !== null) headers["authorization"] = `Bearer ${apiKey}`;
  const response = await fetch(url, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
  } catch {
    throw new Error(`${method} ${url}: ${response.status} with a body that is not JSON: ${text.slice(0, 500)}`);
  }
}

/** The top-level JSON values of `text`, as `curl -s a; curl -s b` prints them (no separator). */
export function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") {
      if (depth++ === 0) start = i;
    } else if ((c === "}" || c === "]") && --depth === 0) values.push(JSON.parse(text.slice(start, i + 1)));
  }
  return values;
}
