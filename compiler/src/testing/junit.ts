import type { PolicyTestOutcome } from "./outcome.js";

/**
 * The run as JUnit XML, the test report format CI systems read (Jenkins, GitLab, GitHub's test reporters): one
 * `<testsuite>` per policy, one `<testcase>` per case, a failing case's reason in `<failure>`, a policy that could not
 * be tested as one `<testcase>` with an `<error>`; with `--require-coverage`, rule coverage is a case of its own.
 * compiler/test/cli-test-formats.test.ts validates the output against a schema of that format.
 */
export function junitXml(outcomes: readonly PolicyTestOutcome[]): string {
  const suites = outcomes.map(suite);
  const total = (k: "tests" | "failures" | "errors") => suites.reduce((n, s) => n + s[k], 0);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attrs({ name: "writ test", tests: total("tests"), failures: total("failures"), errors: total("errors") })}>`,
    ...suites.flatMap((s) => s.lines),
    "</testsuites>",
    "",
  ].join("\n");
}

interface Suite {
  readonly tests: number;
  readonly failures: number;
  readonly errors: number;
  readonly lines: readonly string[];
}

function suite(o: PolicyTestOutcome): Suite {
  const classname = o.suite;
  const open = (tests: number, failures: number, errors: number) =>
    `  <testsuite${attrs({ name: o.suite, tests, failures, errors, skipped: 0, file: o.testFile })}>`;
  if (o.status === "error") {
    const body = [o.error, ...o.details].join("\n");
    return {
      tests: 1,
      failures: 0,
      errors: 1,
      lines: [
        open(1, 0, 1),
        `    <testcase${attrs({ name: o.testFile, classname })}>`,
        `      <error${attrs({ message: o.error, type: "error" })}>${text(body)}</error>`,
        "    </testcase>",
        "  </testsuite>",
      ],
    };
  }
  const { cases, covered, rules, uncovered } = o.report;
  const coverage = uncovered.length > 0 ? `rules no case reaches: ${uncovered.map((r) => `\`${r}\``).join(", ")}` : null;
  const entries = cases.map((c) => ({ name: c.name, failure: c.failure ?? null }));
  if (o.coverageRequired) entries.push({ name: "rule coverage", failure: coverage });
  const failures = entries.filter((c) => c.failure !== null).length;
  const lines = [open(entries.length, failures, 0)];
  for (const c of entries) {
    if (c.failure === null) lines.push(`    <testcase${attrs({ name: c.name, classname })}/>`);
    else
      lines.push(
        `    <testcase${attrs({ name: c.name, classname })}>`,
        `      <failure${attrs({ message: c.failure, type: "assertion" })}>${text(c.failure)}</failure>`,
        "    </testcase>",
      );
  }
  lines.push(
    `    <system-out>${text(`rules covered ${covered.length}/${rules.length}${coverage ? `; ${coverage}` : ""}`)}</system-out>`,
    "  </testsuite>",
  );
  return { tests: entries.length, failures, errors: 0, lines };
}

function attrs(values: Readonly<Record<string, string | number>>): string {
  return Object.entries(values)
    .map(([k, v]) => ` ${k}="${escape(String(v), /[&<>"\t\n\r]/g)}"`)
    .join("");
}

function text(s: string): string {
  return escape(s, /[&<>]/g);
}

/**
 * XML-escapes `special`, and replaces what XML 1.0 cannot hold at all (most control characters, U+FFFE, U+FFFF)
 * with U+FFFD: a case name may contain them, and one such character would make the whole report unreadable.
 */
function escape(s: string, special: RegExp): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "\ufffd").replace(special, (c) => `&#${c.charCodeAt(0)};`);
}
