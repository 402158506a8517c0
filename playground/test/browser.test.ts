/**
 * The playground as a person uses it, in a real headless Chromium (Debian's `chromium`, driven by playwright-core),
 * served by the built `writ playground`: a policy with a mistake shows the compiler's diagnostic, fixing it shows the
 * verdict and the explanation, changing a signal changes the verdict. What the page must show is computed here by
 * the compiler and runtime themselves, so the test checks the page against them, not against copied text.
 */
import { readFileSync } from "node:fs";
import { checkSource, diffChecks, hoverAt, signalsDecider, type ExprView, type SignalsOutcome } from "@writ/compiler";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumUnavailable, launchChromium, servePlayground, type Browser, type ServedPlayground } from "../scripts/browser.js";

const unavailable = chromiumUnavailable();

const POLICY = readFileSync(new URL("../../policies/payments.transfer/1.3.0/policy.writ", import.meta.url), "utf8");
const FIRST_CASE = (
  JSON.parse(readFileSync(new URL("../../policies/payments.transfer/1.3.0/policy.test.json", import.meta.url), "utf8")) as {
    cases: { signals: Record<string, unknown> }[];
  }
).cases[0]!.signals;
/** The shipped policy with one signal misspelt in a rule. */
const MISSPELT = POLICY.replace("rule high_risk when risk_score > HIGH_RISK", "rule high_risk when risk_scor > HIGH_RISK");
/** The conformance fixtures: a sum of cents at a limit, a division by a zero balance (issue 39), `%` and `max` (issue 41). */
const fixture = (name: string): string =>
  readFileSync(new URL(`../../conformance/fixtures/policies/conformance.${name}/1.0.0/policy.writ`, import.meta.url), "utf8");

function decided(policy: string, signals: Record<string, unknown>): Extract<SignalsOutcome, { kind: "decided" }> {
  const outcome = signalsDecider(checkSource("policy.writ", policy, { until: "lower" }))!(JSON.stringify(signals));
  if (outcome.kind !== "decided") throw new Error(`the test's signals do not decide: ${JSON.stringify(outcome)}`);
  return outcome;
}

/** Replaces an editor's text as a paste does. */
async function replaceEditorText(page: Page, editor: string, text: string): Promise<void> {
  await page.click(`${editor} .cm-content`);
  await page.keyboard.press("Control+A");
  await page.keyboard.insertText(text);
}

/** The text of `selector` once it satisfies `expected`, waiting for the debounced update. */
async function settled(page: Page, selector: string, expected: (text: string) => boolean): Promise<string> {
  const deadline = Date.now() + 5_000;
  let text = "";
  while (Date.now() < deadline) {
    text = (await page.locator(selector).textContent()) ?? "";
    if (expected(text) && (await page.locator("body[data-state=ready]").count()) === 1) return text;
    await page.waitForTimeout(50);
  }
  throw new Error(`\`${selector}\` never showed what was expected; it shows: ${text}`);
}

/** Each node of an explained condition as the page lists it: the expression and its value. */
function treeLines(e: ExprView): string[] {
  return [`${e.expr}${e.value}`, ...e.operands.flatMap(treeLines)];
}

/** Every rule with its result, and the deciding rule's condition evaluated down to each comparison and value, shown. */
async function expectExplanation(page: Page, expected: Extract<SignalsOutcome, { kind: "decided" }>): Promise<void> {
  const rules = await page
    .locator("#explanation li.rule[data-rule]")
    .evaluateAll((items) => items.map((li) => ({ rule: li.getAttribute("data-rule"), result: li.querySelector(".truth")?.textContent })));
  expect(rules).toEqual(expected.explanation.rules.map((r) => ({ rule: r.rule, result: r.result })));
  const decider = expected.explanation.rules.find((r) => r.decides)!;
  const tree = page.locator(`#explanation li[data-rule="${decider.rule}"] .tree`);
  expect(await tree.isVisible()).toBe(true);
  const lines = await tree.locator(".expr").allInnerTexts();
  expect(lines.map((line) => line.replace(/\s+/g, ""))).toEqual(treeLines(decider.condition).map((line) => line.replace(/\s+/g, "")));
}

if (unavailable !== null) {
  describe.skip(`the playground in Chromium: ${unavailable}`, () => {
    it("shows diagnostics, the verdict and the explanation as a policy is edited", () => undefined);
  });
} else {
  describe("the playground in Chromium", () => {
    let served: ServedPlayground;
    let browser: Browser;
    let page: Page;
    const pageErrors: string[] = [];

    beforeAll(async () => {
      [served, browser] = await Promise.all([servePlayground(), launchChromium()]);
      page = await browser.context.newPage();
      page.on("pageerror", (e) => pageErrors.push(e.message));
      // A refused request or style (the content security policy), a missing file: the console says so.
      page.on("console", (m) => {
        if (m.type() === "error") pageErrors.push(m.text());
      });
      await page.goto(served.url);
      await page.waitForSelector("body[data-state=ready]");
    });

    afterAll(async () => {
      await browser?.close();
      await served?.stop();
    });

    it("starts with a shipped policy and a signal set of its tests, decided, and equivalent to itself", async () => {
      const expected = decided(POLICY, FIRST_CASE);
      expect(await page.locator("#example").inputValue()).toBe("payments.transfer@1.3.0");
      expect(JSON.parse(await page.locator("#signals-editor .cm-content").innerText())).toEqual(FIRST_CASE);
      expect(expected.decision).toMatchObject({ decided: true, verdict: "approve", ruleId: "within_limits" });
      expect(await page.locator("#decision .verdict").textContent()).toBe("approve");
      expect(await page.locator("#diff-panel").isHidden()).toBe(false);
      await settled(page, "#diff-panel .diff-result", (t) => t.startsWith("Equivalent"));
    });

    it("shows the compiler's diagnostic for a mistake, and the verdict and explanation once it is fixed", async () => {
      const [diagnostic] = checkSource("policy.writ", MISSPELT).diagnostics;
      expect(diagnostic?.severity).toBe("error");
      await replaceEditorText(page, "#policy-editor", MISSPELT);
      const problems = await settled(page, "#policy-problems", (t) => t.includes(diagnostic!.code));
      expect(problems).toContain(diagnostic!.message);
      expect(await page.locator("#policy-problems .where").first().textContent()).toBe(
        `${diagnostic!.span.start.line}:${diagnostic!.span.start.column}`,
      );
      expect(await page.locator("#decision .verdict").textContent()).toBe("no decision");
      expect(await page.locator("#policy-editor .cm-lintRange-error").count()).toBeGreaterThan(0);

      // Fix it by clicking at the end of `risk_scor` and typing the missing letter; completion offers the signal on the way.
      const misspelt = page.locator("#policy-editor .cm-line span.tok-name", { hasText: /^risk_scor$/ });
      const box = (await misspelt.boundingBox())!;
      await misspelt.click({ position: { x: box.width - 1, y: box.height / 2 } });
      await page.keyboard.type("e");
      await page.waitForSelector(".cm-tooltip-autocomplete li:has-text('risk_score')");
      await page.keyboard.press("Escape");

      await settled(page, "#policy-problems", (t) => t === "No problems.");
      const expected = decided(POLICY, FIRST_CASE);
      expect(await page.locator("#decision .verdict").textContent()).toBe("approve");
      expect(await page.locator("#decision .decided-by code").textContent()).toBe("within_limits");
      expect(await page.locator("#decision .reason").textContent()).toBe("verified customer within limits");

      await expectExplanation(page, expected);

      // Hover on a constant: the compiler's description of it.
      const hover = hoverAt(checkSource("policy.writ", POLICY), POLICY.indexOf("> HIGH_RISK") + 2)!;
      await page
        .locator("#policy-editor .cm-line span.tok-name", { hasText: /^HIGH_RISK$/ })
        .first()
        .hover();
      const shown = await page.locator(".cm-tooltip-hover .hover").innerText();
      const plain = (text: string): string =>
        text
          .replace(/```\w*|`/g, "")
          .replace(/\s+/g, " ")
          .trim();
      expect(plain(shown)).toBe(plain(hover.markdown));
      expect(plain(shown)).toContain("const HIGH_RISK = 80");
      expect(pageErrors).toEqual([]);
    });

    it("changes the verdict when a signal changes", async () => {
      // A riskier transfer to a bank of unknown country: the sanctions rule is unknown, the risk rule decides.
      const { destination_country: _, ...unresolved } = FIRST_CASE;
      const risky = { ...unresolved, risk_score: 90 };
      const expected = decided(POLICY, risky);
      expect(expected.decision).toMatchObject({ verdict: "reject", ruleId: "high_risk" });
      expect(expected.explanation.rules[0]).toMatchObject({ rule: "sanctioned", result: "unknown" });
      await replaceEditorText(page, "#signals-editor", JSON.stringify(risky, null, 2));
      await settled(page, "#decision .verdict", (t) => t === "reject");
      expect(await page.locator("#decision .decided-by code").textContent()).toBe("high_risk");
      await expectExplanation(page, expected);

      // A signal of the wrong type: the schema's VAL error, under the signals.
      await replaceEditorText(page, "#signals-editor", JSON.stringify({ ...FIRST_CASE, risk_score: "90" }, null, 2));
      const problems = await settled(page, "#signals-problems", (t) => t.includes("VAL-"));
      expect(problems).toContain("risk_score");
      expect(await page.locator("#decision .verdict").textContent()).toBe("refused");
      expect(pageErrors).toEqual([]);
    });

    it("decides decimals exactly, and shows a fault where a rule's arithmetic faults", async () => {
      await replaceEditorText(page, "#policy-editor", fixture("money"));
      await replaceEditorText(page, "#signals-editor", '{"daily_total": 1000.10, "amount": 0.20}');
      await settled(page, "#decision .verdict", (t) => t === "approve");
      expect(await page.locator("#decision .decided-by code").textContent()).toBe("otherwise");
      const sum = page
        .locator('#explanation li[data-rule="over_limit"] .tree .expr')
        .filter({ has: page.locator("code", { hasText: /^daily_total \+ amount$/ }) });
      await page.locator('#explanation li[data-rule="over_limit"] summary').click();
      expect((await sum.innerText()).replace(/\s+/g, " ")).toContain("daily_total + amount 1000.30");

      await replaceEditorText(page, "#policy-editor", fixture("divide"));
      await replaceEditorText(page, "#signals-editor", '{"amount": 100, "balance": 0}');
      await settled(page, "#decision .verdict", (t) => t === "fault");
      expect(await page.locator("#decision .decided-by").innerText()).toBe("rule most_of_balance EVAL-001");
      expect(await page.locator("#decision .why").innerText()).toContain("[EVAL-001@most_of_balance]");
      const faulted = page.locator('#explanation li[data-rule="most_of_balance"]');
      expect(await faulted.locator(".truth").first().textContent()).toBe("fault");
      expect(await faulted.locator(".tree .value.truth-fault").first().textContent()).toBe("fault");
      expect(await faulted.locator(".tree .value.truth-fault", { hasText: "EVAL-001" }).count()).toBe(1);
      expect(pageErrors).toEqual([]);
    });

    it("decides `%`, `abs`, `min` and `max` exactly, and shows a remainder by zero as a fault", async () => {
      await replaceEditorText(page, "#policy-editor", fixture("bounds"));
      await replaceEditorText(page, "#signals-editor", '{"amount": 25000.01, "daily_total": 100, "balance_change": 500}');
      await settled(page, "#decision .verdict", (t) => t === "escalate");
      expect(await page.locator("#decision .decided-by code").textContent()).toBe("over_limit");
      await expectExplanation(page, decided(fixture("bounds"), { amount: 25000.01, daily_total: 100, balance_change: 500 }));
      const max = page
        .locator('#explanation li[data-rule="over_limit"] .tree .expr')
        .filter({ has: page.locator("code", { hasText: /^max\(amount, daily_total\)$/ }) });
      expect((await max.innerText()).replace(/\s+/g, " ")).toContain("max(amount, daily_total) 25000.01");

      await replaceEditorText(page, "#policy-editor", fixture("remainder"));
      await replaceEditorText(page, "#signals-editor", '{"amount": 1000.01, "lots": 0, "change": 0}');
      await settled(page, "#decision .verdict", (t) => t === "fault");
      expect(await page.locator("#decision .decided-by").innerText()).toBe("rule split_evenly EVAL-001");
      expect(await page.locator("#decision .why").innerText()).toContain("[EVAL-001@split_evenly]");
      expect(pageErrors).toEqual([]);
    });

    it("orders `semver` signals by precedence, and shows an invalid version as VAL-013", async () => {
      await replaceEditorText(page, "#policy-editor", fixture("versions"));
      await replaceEditorText(page, "#signals-editor", '{"client_version": "2.4.0-rc.1"}');
      await settled(page, "#decision .verdict", (t) => t === "escalate");
      expect(await page.locator("#decision .decided-by code").textContent()).toBe("outdated");
      await expectExplanation(page, decided(fixture("versions"), { client_version: "2.4.0-rc.1" }));

      await replaceEditorText(page, "#signals-editor", '{"client_version": "v2.4.0"}');
      const problems = await settled(page, "#signals-problems", (t) => t.includes("VAL-013"));
      expect(problems).toContain("client_version");
      expect(await page.locator("#decision .verdict").textContent()).toBe("refused");
      expect(pageErrors).toEqual([]);
    });

    it("tests `ip` signals against CIDR ranges, an IPv4-mapped address as its IPv4 address, and shows VAL-014", async () => {
      await replaceEditorText(page, "#policy-editor", fixture("networks"));
      await replaceEditorText(page, "#signals-editor", '{"client_ip": "::ffff:10.1.2.3"}');
      await settled(page, "#decision .verdict", (t) => t === "approve");
      expect(await page.locator("#decision .decided-by code").textContent()).toBe("office");
      await expectExplanation(page, decided(fixture("networks"), { client_ip: "::ffff:10.1.2.3" }));

      await replaceEditorText(page, "#signals-editor", '{"client_ip": "010.0.0.1"}');
      const problems = await settled(page, "#signals-problems", (t) => t.includes("VAL-014"));
      expect(problems).toContain("client_ip");
      expect(await page.locator("#decision .verdict").textContent()).toBe("refused");
      expect(pageErrors).toEqual([]);
    });

    it("decides durations and timestamp arithmetic, the explanation writing the instant computed", async () => {
      const signals = { amount: 1000, requested_at: "2026-03-30T23:59:59.999Z", account_opened_at: "2026-03-01T00:00:00Z" };
      await replaceEditorText(page, "#policy-editor", fixture("durations"));
      await replaceEditorText(page, "#signals-editor", JSON.stringify(signals));
      await settled(page, "#decision .verdict", (t) => t === "escalate");
      expect(await page.locator("#decision .decided-by code").textContent()).toBe("new_account");
      await expectExplanation(page, decided(fixture("durations"), signals));
      expect(pageErrors).toEqual([]);
    });

    it("decides `now` at the instant given, says it, refuses a malformed one, and uses the current time when empty", async () => {
      const signals = { amount: 500, deadline: "2026-06-01T17:00:00Z", account_opened_at: "2025-01-01T00:00:00Z" };
      const setNow = async (text: string): Promise<void> => {
        await page.fill("#now", text);
      };
      await replaceEditorText(page, "#policy-editor", fixture("now"));
      await replaceEditorText(page, "#signals-editor", JSON.stringify(signals));
      await setNow("2026-06-01T16:50:00Z");
      await settled(page, "#decision .verdict", (t) => t === "reject");
      expect(await page.locator("#decision .decided-by code").textContent()).toBe("closing_soon");
      expect(await page.locator("#decision .now code").textContent()).toBe("2026-06-01T16:50:00.000Z");
      const expected = signalsDecider(checkSource("policy.writ", fixture("now"), { until: "lower" }))!(
        JSON.stringify(signals),
        new Date("2026-06-01T16:50:00Z"),
      );
      if (expected.kind !== "decided") throw new Error("the signals do not decide");
      await expectExplanation(page, expected);
      const sum = page
        .locator('#explanation li[data-rule="closing_soon"] .tree .expr')
        .filter({ has: page.locator("code", { hasText: /^now \+ 15m$/ }) });
      expect((await sum.innerText()).replace(/\s+/g, " ")).toContain('now + 15m "2026-06-01T17:05:00Z"');

      // An offset is an instant: 19:00:01+02:00 is past the deadline.
      await setNow("2026-06-01T19:00:01+02:00");
      await settled(page, "#decision .verdict", (t) => t === "escalate");
      expect(await page.locator("#decision .now code").textContent()).toBe("2026-06-01T17:00:01.000Z");

      await setNow("tomorrow");
      const why = await settled(page, "#decision .why", (t) => t.includes("RFC 3339"));
      expect(why).toContain("`now` must be an RFC 3339 timestamp with an offset");
      expect(await page.locator("#decision .verdict").textContent()).toBe("no decision");
      expect(await page.locator("#now").getAttribute("aria-invalid")).toBe("true");

      // Empty: the current time, read when the page decides.
      await setNow("");
      const before = Date.now();
      await settled(page, "#decision .now", (t) => t.startsWith("decided at now ="));
      const used = Date.parse((await page.locator("#decision .now code").textContent())!);
      expect(Math.abs(used - before)).toBeLessThan(60_000);
      expect(await page.locator("#now").getAttribute("aria-invalid")).toBe("false");
      expect(pageErrors).toEqual([]);
    });

    it("a diff of `now < deadline` against `now <= deadline` shows its witness's instant, and trying it sets `now`", async () => {
      const before = fixture("now");
      const after = before.replace("when now > deadline", "when now >= deadline");
      await replaceEditorText(page, "#policy-editor", before);
      await page.locator("#diff-panel button", { hasText: "use the current policy as the baseline" }).click();
      await replaceEditorText(page, "#policy-editor", after);
      await settled(page, "#diff-panel .diff-result", (t) => t.includes("at now ="));
      const diff = diffChecks(checkSource("a.writ", before, { until: "lower" }), checkSource("b.writ", after, { until: "lower" }))!;
      const region = diff.regions[0]!;
      expect(await page.locator("#diff-panel .witness-now code").first().textContent()).toBe(region.witness.now);
      await page.locator("#diff-panel .regions > li button").first().click();
      await settled(page, "#decision .verdict", (t) => t === region.new.verdict);
      expect(await page.locator("#now").inputValue()).toBe(region.witness.now);
      expect(await page.locator("#decision .decided-by code").textContent()).toBe(region.new.rule);
      // The shipped policy again as the baseline, for the tests after this one.
      await replaceEditorText(page, "#policy-editor", POLICY);
      await page.locator("#diff-panel button", { hasText: "use the current policy as the baseline" }).click();
      expect(pageErrors).toEqual([]);
    });

    it("decides calendar fields in a zone with the page's own table, the explanation giving each field's offset", async () => {
      // 11:30 UTC on Wednesday 3 June 2026 is 12:30 in London (UTC+01:00): minute 750 of the day, over lunch.
      const signals = { requested_at: "2026-06-03T11:30:00Z" };
      await replaceEditorText(page, "#policy-editor", fixture("zones"));
      await replaceEditorText(page, "#signals-editor", JSON.stringify(signals));
      await settled(page, "#decision .verdict", (t) => t === "escalate");
      expect(await page.locator("#decision .decided-by code").textContent()).toBe("lunch");
      await expectExplanation(page, decided(fixture("zones"), signals));
      expect(await page.locator('#explanation li[data-rule="lunch"] .tree').innerText()).toContain("750 (UTC+01:00)");

      // Typing a zone argument, completion offers the zones whose name holds what was typed and replaces the whole name.
      await page.click("#policy-editor .cm-content");
      await page.keyboard.press("Control+End");
      await page.keyboard.insertText('\nrule early when local_hour(requested_at, "Europe/Lond');
      await page.keyboard.type("o");
      await page.click(".cm-tooltip-autocomplete li:has-text('Europe/London')");
      const source = await page.locator("#policy-editor .cm-content").innerText();
      expect(source).toContain('rule early when local_hour(requested_at, "Europe/London');
      expect(source).not.toContain("Europe/Europe");
      expect(pageErrors).toEqual([]);
    });

    it("lists what an edit changes against the baseline, with signals that show it", async () => {
      // A lower risk threshold: transfers scored 71 to 80 are now rejected by `high_risk`.
      const edited = POLICY.replace("const HIGH_RISK = 80", "const HIGH_RISK = 70");
      const diff = diffChecks(checkSource("a.writ", POLICY, { until: "lower" }), checkSource("b.writ", edited, { until: "lower" }))!;
      expect(diff.result).toBe("different");
      await replaceEditorText(page, "#policy-editor", edited);
      await settled(page, "#diff-panel .diff-result", (t) => t.includes("try these signals"));
      expect(await page.locator("#diff-panel .regions > li").count()).toBe(diff.regions.length);
      const first = diff.regions[0]!;
      const shown = await page.locator("#diff-panel .regions > li").first().innerText();
      expect(shown).toContain(`baseline: ${first.old.verdict}`);
      expect(shown).toContain(`now: ${first.new.verdict}`);
      // Its witness, tried: the page decides it as the edited policy does.
      await page.locator("#diff-panel .regions > li button").first().click();
      await settled(page, "#decision .verdict", (t) => t === first.new.verdict);
      expect(await page.locator("#decision .decided-by code").textContent()).toBe(first.new.rule);
      expect(pageErrors).toEqual([]);
    });

    it("shows E310 for a pattern the linear-time engine refuses, and decides with the engine once it is one it runs", async () => {
      const refused = POLICY.replace("/^(CU|IR|KP|SY)[0-9]{2}/", "/^(CU|IR|KP|SY)\\1/");
      const [diagnostic] = checkSource("policy.writ", refused).diagnostics;
      expect(diagnostic).toMatchObject({ code: "E310", severity: "error" });
      await replaceEditorText(page, "#policy-editor", refused);
      expect(await settled(page, "#policy-problems", (t) => t.includes("E310"))).toContain(diagnostic!.message);
      expect(await page.locator("#decision .verdict").textContent()).toBe("no decision");
      // The shipped policy's `matches` and `matching` patterns run in the page on the engine: a sanctioned account.
      await replaceEditorText(page, "#policy-editor", POLICY);
      const sanctioned = { ...FIRST_CASE, destination_account: "IR12ACME00000000001" };
      const expected = decided(POLICY, sanctioned);
      expect(expected.decision).toMatchObject({ verdict: "reject", ruleId: "sanctioned" });
      await replaceEditorText(page, "#signals-editor", JSON.stringify(sanctioned, null, 2));
      await settled(page, "#decision .verdict", (t) => t === "reject");
      expect(await page.locator("#decision .decided-by code").textContent()).toBe("sanctioned");
      expect(pageErrors).toEqual([]);
    });
  });
}
