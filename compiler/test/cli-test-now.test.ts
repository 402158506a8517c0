/**
 * `writ test` of a policy that reads `now` (issue 41 item 2): each case states its instant, and a case that would
 * depend on the wall clock fails with the fix.
 */
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scratchCli } from "./support/cli-run.js";

const cli = scratchCli();
const FIXTURE = new URL("../../conformance/fixtures/policies/conformance.now/1.0.0/policy.writ", import.meta.url).pathname;
const DIR = "now-policy";
const BASE = { amount: 500, deadline: "2026-06-01T17:00:00Z", account_opened_at: "2025-01-01T00:00:00Z" };

function withTests(file: unknown): void {
  mkdirSync(join(cli.cwd, DIR), { recursive: true });
  cpSync(FIXTURE, join(cli.cwd, DIR, "policy.writ"));
  writeFileSync(join(cli.cwd, DIR, "policy.test.json"), JSON.stringify(file, null, 2));
}

describe("writ test with now", () => {
  it("each case decides at its own `now`", async () => {
    withTests({
      baseSignals: BASE,
      cases: [
        { name: "inside the window", now: "2026-06-01T12:00:00Z", expect: { verdict: "approve", rule: "otherwise" } },
        { name: "within the grace period", now: "2026-06-01T16:45:00.001Z", expect: { verdict: "reject", rule: "closing_soon" } },
        { name: "at the grace period's edge", now: "2026-06-01T16:45:00Z", expect: { verdict: "approve", rule: "otherwise" } },
        { name: "after the deadline", now: "2026-06-01T19:00:01+02:00", expect: { verdict: "escalate", rule: "after_hours_window" } },
        {
          name: "a new account",
          now: "2026-06-01T12:00:00Z",
          signals: { amount: 1000, account_opened_at: "2026-05-02T12:00:00.001Z" },
          expect: { verdict: "escalate", rule: "new_account" },
        },
        { name: "a refused request needs no instant", without: ["deadline"], expect: { invalid: ["VAL-004"] } },
      ],
    });
    expect(await cli.run("test", DIR, "--require-coverage")).toBe(0);
    expect(cli.out[0]).toMatch(/: 6\/6 cases passed/);
  });

  it("a case of a policy that reads `now` without one fails, saying what to add", async () => {
    withTests({ baseSignals: BASE, cases: [{ name: "on the wall clock", expect: { verdict: "approve" } }] });
    expect(await cli.run("test", DIR)).toBe(4);
    expect(cli.out.join("\n")).toContain(
      'on the wall clock: the policy reads `now`: give the case a `now`, such as "now": "2026-06-01T12:00:00Z", so that it does not depend on the clock',
    );
  });

  it.each([["2026-06-01T12:00:00"], [1780315200000], ["+010000-01-01T00:00:00Z"]])(
    "a `now` that is no RFC 3339 timestamp (%s) is a test file error with its path",
    async (now) => {
      withTests({ baseSignals: BASE, cases: [{ name: "a", now, expect: { verdict: "approve" } }] });
      expect(await cli.run("test", DIR)).toBe(4);
      expect([...cli.out, ...cli.err].join("\n")).toContain(
        "`$.cases[0].now` must be an RFC 3339 timestamp with an offset, from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z",
      );
    },
  );
});
