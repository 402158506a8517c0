/**
 * One step of a case: build the request, send it (once, or `repeat.count` times at `repeat.concurrency`), check the
 * answer, capture values for later steps. A step that fails returns its problems; the case stops there.
 */
import { buildRequest } from "./build-request.js";
import type { Step } from "./case-file.js";
import { bodyValue, checkAnswer, parseBody, type ParsedBody } from "./check-answer.js";
import { NetworkError, type HttpAnswer, type HttpClient } from "./http-client.js";
import { resolvePointer } from "./json-pointer.js";
import { match, type MatchContext } from "./matchers.js";
import type { PinnedKey } from "./pinned-key.js";
import { TemplateError, type CaseScope } from "./templates.js";

export interface StepContext {
  readonly client: HttpClient;
  readonly apiKey: string;
  readonly key: PinnedKey | null;
}

interface Received {
  readonly answer: HttpAnswer;
  readonly body: ParsedBody;
  /** When the request was sent: `{"$isoTime": {"withinSeconds": N}}` measures from it. */
  readonly sentAt: Date;
}

async function sendOnce(step: Step, scope: CaseScope, ctx: StepContext): Promise<Received> {
  // Built per send: `{{uuid}}` and `{{now}}` are fresh for every repetition.
  const request = buildRequest(step.request, scope, ctx.apiKey);
  const sentAt = scope.now();
  const answer = await ctx.client.send(request);
  return { answer, body: parseBody(answer), sentAt };
}

/** What the matchers of one answer see: the case's captures and UUIDs, and when that answer's request was sent. */
function matchContext(scope: CaseScope, received: Received): MatchContext {
  return { lookup: (name) => scope.lookup(name), sentAt: received.sentAt };
}

function captureFrom(step: Step, received: Received, scope: CaseScope): string[] {
  const problems: string[] = [];
  for (const [name, pointer] of Object.entries(step.capture ?? {})) {
    const found = resolvePointer(bodyValue(received.body), pointer);
    if (found.found) scope.capture(name, found.value);
    else problems.push(`capture \`${name}\`: the body has nothing at ${pointer || "/"}`);
  }
  return problems;
}

function statusTally(received: readonly Received[]): Map<number, number> {
  const tally = new Map<number, number>();
  for (const r of received) tally.set(r.answer.status, (tally.get(r.answer.status) ?? 0) + 1);
  return tally;
}

function showTally(tally: Map<number, number>): string {
  return [...tally.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([status, n]) => `${status} ×${n}`)
    .join(", ");
}

function countProblems(step: Step, received: readonly Received[], scope: CaseScope): string[] {
  const counts = step.expect.counts;
  if (counts === undefined) return [];
  const tally = statusTally(received);
  const problems: string[] = [];
  for (const [status, expected] of Object.entries(counts)) {
    for (const m of match(expected, tally.get(Number(status)) ?? 0, "", scope)) problems.push(`counts ${status}: ${m.message}`);
  }
  for (const [status, n] of tally) {
    if (!Object.hasOwn(counts, String(status)))
      problems.push(`counts: ${n} answer${n === 1 ? "" : "s"} with status ${status}, none expected`);
  }
  return problems.length === 0 ? [] : [...problems, `counts: got ${showTally(tally)}`];
}

async function repeated(step: Step, scope: CaseScope, ctx: StepContext): Promise<string[]> {
  const { count, concurrency = 1, until } = step.repeat!;
  const received: Received[] = [];
  let target: Received | undefined;
  while (received.length < count && target === undefined) {
    const batch = Math.min(concurrency, count - received.length);
    received.push(...(await Promise.all(Array.from({ length: batch }, () => sendOnce(step, scope, ctx)))));
    if (until !== undefined) target = received.find((r) => r.answer.status === until);
  }
  const problems: string[] = [];
  if (until !== undefined) {
    if (target === undefined)
      return [`status: expected a ${until} within ${count} requests, got none (${showTally(statusTally(received))})`];
    problems.push(...checkAnswer(target.answer, target.body, step.expect, matchContext(scope, target), ctx.key));
  } else {
    // Every answer is checked; the same problem in several answers is one message with how often.
    const seen = new Map<string, number>();
    for (const r of received) {
      for (const p of checkAnswer(r.answer, r.body, step.expect, matchContext(scope, r), ctx.key)) seen.set(p, (seen.get(p) ?? 0) + 1);
    }
    for (const [p, n] of seen) problems.push(n === 1 && received.length === 1 ? p : `${p} (in ${n} of ${received.length} answers)`);
  }
  problems.push(...countProblems(step, received, scope));
  if (problems.length === 0) problems.push(...captureFrom(step, target ?? received[0]!, scope));
  return problems;
}

/** The step's problems (empty: it passed). Network failures and unresolvable templates are problems too. */
export async function runStep(step: Step, scope: CaseScope, ctx: StepContext): Promise<string[]> {
  try {
    if (step.repeat !== undefined) return await repeated(step, scope, ctx);
    const received = await sendOnce(step, scope, ctx);
    const problems = checkAnswer(received.answer, received.body, step.expect, matchContext(scope, received), ctx.key);
    return problems.length > 0 ? problems : captureFrom(step, received, scope);
  } catch (e) {
    if (e instanceof NetworkError) return [`network error: ${e.message}`];
    if (e instanceof TemplateError) return [`request: ${e.message}`];
    throw e;
  }
}
