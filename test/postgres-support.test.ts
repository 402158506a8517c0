/**
 * The PostgreSQL tests' gate (test/support/postgres.ts): without a database they skip locally with one line saying how
 * to run them, and fail under CI, which must never pass by skipping them.
 */
import { describe, expect, it } from "vitest";
import { postgresUnavailable } from "./support/postgres.js";

const NOWHERE = "postgresql://writ:secret@127.0.0.1:1/none";

describe("postgresUnavailable", () => {
  it("locally: one line naming the server (without credentials) and how to run the tests", async () => {
    const why = await postgresUnavailable(NOWHERE, {});
    expect(why).toMatch(
      /^no PostgreSQL at postgresql:\/\/127\.0\.0\.1:1\/none \(.+\): start one, or set WRIT_TEST_POSTGRES_URL, to run these tests$/,
    );
    expect(why).not.toContain("\n");
    expect(why).not.toContain("secret");
  });

  it("with CI=true: an error, never a skip", async () => {
    await expect(postgresUnavailable(NOWHERE, { CI: "true" })).rejects.toThrow(/CI runs these tests against a real database/);
  });
});
