/**
 * Writes the OpenAPI 3.1 documents of both surfaces (sidecar/src/openapi/) to docs/openapi/surface-a.json and
 * surface-b.json, where they are committed:
 *
 *     npm run openapi              writes both files
 *     npm run openapi -- --check   exits 1 when a committed file differs from what the code makes
 *
 * sidecar/test/openapi/documents.test.ts makes the same check.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { OPENAPI_DOCUMENTS, openApiText, type OpenApiDocumentName } from "../src/openapi/documents.js";

export const OPENAPI_DIR = fileURLToPath(new URL("../../docs/openapi/", import.meta.url));

export function openApiPath(name: OpenApiDocumentName): string {
  return join(OPENAPI_DIR, `${name}.json`);
}

function committed(name: OpenApiDocumentName): string | null {
  try {
    return readFileSync(openApiPath(name), "utf8");
  } catch {
    return null;
  }
}

function main(check: boolean): number {
  let stale = 0;
  for (const name of Object.keys(OPENAPI_DOCUMENTS) as OpenApiDocumentName[]) {
    const text = openApiText(name);
    if (committed(name) === text) continue;
    if (check) {
      process.stderr.write(`docs/openapi/${name}.json is not what the code makes: run \`npm run openapi\`\n`);
      stale += 1;
    } else {
      writeFileSync(openApiPath(name), text);
      process.stdout.write(`wrote docs/openapi/${name}.json\n`);
    }
  }
  return stale === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main(process.argv.includes("--check"));
