/**
 * `npm run screenshots`: the pictures of the playground in docs/images/, taken in headless Chromium from the built
 * playground as `writ playground` serves it (docs/playground.md shows them). Run after changing the page.
 */
import { mkdirSync, readFileSync } from "node:fs";
import type { Page } from "playwright-core";
import { chromiumUnavailable, launchChromium, servePlayground } from "./browser.js";

const OUT = new URL("../../docs/images/", import.meta.url);
const POLICY = readFileSync(new URL("../../policies/payments.transfer/1.2.0/policy.writ", import.meta.url), "utf8");

const unavailable = chromiumUnavailable();
if (unavailable !== null) throw new Error(unavailable);
mkdirSync(OUT, { recursive: true });
const [served, browser] = await Promise.all([servePlayground(), launchChromium()]);
try {
  const page = await browser.context.newPage();
  await page.goto(served.url);
  await ready(page);
  await page.screenshot({ path: new URL("playground-decision.png", OUT).pathname });

  // The explanation of a transfer whose destination country is unknown: a rule whose condition is unknown.
  await page.selectOption("#case", { label: "an Iranian IBAN is rejected although the bank's country is unknown (reject)" });
  await ready(page);
  await page
    .locator("main > section")
    .nth(1)
    .screenshot({ path: new URL("playground-explanation.png", OUT).pathname });

  // A misspelt signal: the compiler's diagnostic, marked in the editor and listed under it.
  await page.click("#policy-editor .cm-content");
  await page.keyboard.press("Control+A");
  await page.keyboard.insertText(POLICY.replace("rule high_risk when risk_score > HIGH_RISK", "rule high_risk when risk_scor > HIGH_RISK"));
  await ready(page);
  await page.locator("#policy-editor .cm-lintRange-error").first().hover();
  await page.waitForSelector(".cm-tooltip-hover, .cm-tooltip-lint");
  await page.screenshot({ path: new URL("playground-diagnostic.png", OUT).pathname });
} finally {
  await browser.close();
  await served.stop();
}

async function ready(page: Page): Promise<void> {
  await page.waitForTimeout(300);
  await page.waitForSelector("body[data-state=ready]");
}
