/**
 * `writ eval --now` (issue 41 item 2): the decision instant `now` reads, given or the current time, and said in the
 * output, text and JSON; a malformed one is refused with the form it must have.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scratchCli } from "./support/cli-run.js";

const cli = scratchCli();
const POLICY = "../../conformance/fixtures/policies/conformance.now/1.0.0/policy.writ";
const SIGNALS = { amount: 500, deadline: "2026-06-01T17:00:00Z", account_opened_at: "2025-01-01T00:00:00Z" };

function policyAt(): string {
  // The fixture, copied into the scratch directory.
  const source = new URL(POLICY, import.meta.url);
  const path = join(cli.cwd, "now.writ");
  writeFileSync(path, readFileSync(source, "utf8"));
  return "now.writ";
}

function signalsFile(signals: unknown = SIGNALS): string {
  writeFileSync(join(cli.cwd, "signals.json"), JSON.stringify(signals));
  return "signals.json";
}

describe("writ eval --now", () => {
  it("decides at the instant given and says it: before, inside the grace period, after the deadline", async () => {
    const decide = async (now: string): Promise<string[]> => {
      cli.out.length = 0;
      expect(await cli.run("eval", policyAt(), "--signals", signalsFile(), "--now", now)).toBe(0);
      return cli.out.slice(1);
    };
    expect(await decide("2026-06-01T12:00:00Z")).toEqual([
      "now:     2026-06-01T12:00:00.000Z",
      "verdict: approve",
      "rule:    otherwise",
      "reason:  an established account inside its window",
    ]);
    expect((await decide("2026-06-01T16:50:00+00:00"))[2]).toBe("rule:    closing_soon");
    // An offset is applied: 19:00:01 at +02:00 is 17:00:01Z, past the deadline.
    expect(await decide("2026-06-01T19:00:01+02:00")).toEqual([
      "now:     2026-06-01T17:00:01.000Z",
      "verdict: escalate",
      "rule:    after_hours_window",
      "reason:  the window has closed",
    ]);
  });

  it("`now - account_opened_at < 30d`: a new account at the instant given", async () => {
    const signals = signalsFile({ ...SIGNALS, amount: 1000, account_opened_at: "2026-05-10T00:00:00Z" });
    expect(await cli.run("eval", policyAt(), "--signals", signals, "--now", "2026-06-01T12:00:00Z")).toBe(0);
    expect(cli.out[3]).toBe("rule:    new_account");
  });

  it("--json says the instant; --explain shows `now` and what is computed from it in their own text", async () => {
    const at = "2026-06-01T16:50:00Z";
    expect(await cli.run("eval", policyAt(), "--signals", signalsFile(), "--now", at, "--format", "json", "--explain")).toBe(0);
    const out = JSON.parse(cli.out.join("\n")) as { now: string; decision: { ruleMatched: string }; explanation: unknown };
    expect(out.now).toBe("2026-06-01T16:50:00.000Z");
    expect(out.decision.ruleMatched).toBe("closing_soon");
    cli.out.length = 0;
    expect(await cli.run("eval", policyAt(), "--signals", signalsFile(), "--now", at, "--explain")).toBe(0);
    const lines = cli.out.map((l) => l.trim());
    expect(lines).toContain('now: "2026-06-01T16:50:00.000Z"');
    expect(lines).toContain('now + 15m: "2026-06-01T17:05:00Z"');
    expect(lines).toContain("now - account_opened_at: 744050m");
  });

  it("without --now: the current time, said as such", async () => {
    const before = Date.now();
    expect(await cli.run("eval", policyAt(), "--signals", signalsFile())).toBe(0);
    const line = cli.out[1]!;
    expect(line).toMatch(/^now: {5}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \(the current time; --now sets it\)$/);
    const used = Date.parse(line.slice(9, 33));
    expect(used).toBeGreaterThanOrEqual(before);
    expect(used).toBeLessThanOrEqual(Date.now());
  });

  it("a policy that does not read `now` prints no instant unless one is given", async () => {
    const pay = "policies/payments.transfer/1.2.0";
    const signals = signalsFile({
      amount: 10,
      currency: "CHF",
      destination_account: "DE89370400440532013000",
      kyc_verified: true,
      risk_score: 5,
      daily_total: 0,
      account_age_days: 400,
    });
    expect(await cli.run("eval", pay, "--signals", signals)).toBe(0);
    expect(cli.out.some((l) => l.startsWith("now:"))).toBe(false);
  });

  it.each([
    ["2026-06-01", "a date without a time"],
    ["2026-06-01T12:00:00", "no offset"],
    ["2026-02-30T12:00:00Z", "no such day"],
    ["tomorrow", "not a timestamp"],
  ])("a malformed --now (%s, %s) is a usage error that shows the form", async (given) => {
    expect(await cli.run("eval", policyAt(), "--signals", signalsFile(), "--now", given)).toBe(2);
    expect(cli.err.at(-1)).toBe(
      `writ: eval: --now must be an RFC 3339 timestamp with an offset, from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, such as 2026-06-01T12:00:00Z; given \`${given}\``,
    );
  });
});
