import { cidrSpan, ipAddress, irOperands, prepareExpression, type IpSpan, type IrExpr, type IrSignal, type PolicyIr } from "@writ/runtime";
import { ChoiceSet } from "../analysis/choice-set.js";
import { ipCells } from "./ip-domain.js";
import { irNodes } from "./ir-operands.js";
import { semverCells } from "./semver-domain.js";
import { DOUBLES } from "./number-domain.js";
import type { SignalDomain } from "./signal-domain.js";
import { valueAt } from "./truth.js";

/**
 * `ip` and `semver` signals: ordered domains (addresses as 128-bit numbers, versions by precedence) cut at every
 * address, range and version the conditions of both versions compare them with (ip-domain.ts, semver-domain.ts). Each
 * cut piece holds values on which every modelled condition (`==`, `!=`, `<` and kin, `in` a list, `in_cidr`, against
 * constants) is constant, so a signal is a choice among the pieces, each stood for by one value of it, and a
 * condition is evaluated by the runtime on that value: exact, and a witness the runtime reads back into its piece.
 */
export type OrderedKind = "ip" | "semver";

export const isOrdered = (kind: string): kind is OrderedKind => kind === "ip" || kind === "semver";

/**
 * The domain of each `ip` or `semver` signal of `irs` as they declare it, or null for a signal of another type, one a
 * version declares otherwise (a `string` there), or versions whose cells cannot be found (semver-domain.ts): such a
 * signal stays a string, its conditions opaque atoms.
 */
export function orderedDomains(irs: readonly PolicyIr[]): (name: string, signal: IrSignal, required: boolean) => SignalDomain | null {
  const formats = new Map<string, Set<string | undefined>>();
  for (const ir of irs)
    for (const [name, s] of Object.entries(ir.signals)) formats.set(name, (formats.get(name) ?? new Set()).add(s.format));
  const { ips, versions } = compared(irs.flatMap((ir) => ir.rules.map((r) => r.when)));
  const cells = { ip: ipCells(ips.points, ips.spans), semver: semverCells(versions) };
  return (name, signal, required) => {
    const kind = signal.format;
    const values = kind === undefined ? null : cells[kind];
    if (kind === undefined || values === null || formats.get(name)?.size !== 1) return null;
    return {
      kind,
      accepted: { absent: !required, values: ChoiceSet.all(values) },
      numbers: DOUBLES,
      declaration: `${name}${required ? "" : "?"}: ${kind}`,
      unmodelled: null,
    };
  };
}

/** Why `e`, a condition on one `ip` or `semver` signal, is not a form the cells decide; null when it is. */
export function orderedUnmodelled(e: IrExpr): string | null {
  for (const node of irNodes(e)) {
    const reads = irOperands(node).some((o) => o.op === "signal");
    if (reads && constantsOf(node) === null) return "this form of condition on an address or a version is not modelled";
  }
  return null;
}

/** The addresses, ranges and versions compared with signals in `conditions`. */
function compared(conditions: readonly IrExpr[]): { ips: { points: bigint[]; spans: IpSpan[] }; versions: string[] } {
  const ips = { points: [] as bigint[], spans: [] as IpSpan[] };
  const versions: string[] = [];
  for (const node of conditions.flatMap(irNodes)) {
    const found = constantsOf(node);
    if (found === null) continue;
    if (found.kind === "semver") versions.push(...found.values);
    for (const v of found.kind === "ip" ? found.values : []) {
      const point = ipAddress(v);
      if (point !== null) ips.points.push(point);
    }
    for (const r of found.kind === "cidr" ? found.values : []) {
      const span = cidrSpan(r);
      if (span !== null) ips.spans.push(span);
    }
  }
  return { ips, versions };
}

/**
 * The constants a modelled comparison of an address or a version holds (`kind` `cidr`: ranges), or null when `node`
 * is not one: a comparison, `in` or `in_cidr` of a signal with constants.
 */
function constantsOf(node: IrExpr): { kind: OrderedKind | "cidr"; values: string[] } | null {
  const text = (x: IrExpr): string[] | null => {
    if (irNodes(x).some((n) => n.op === "signal" || n.op === "present")) return null;
    const v = valueAt(prepareExpression(x), {});
    return typeof v === "string" ? [v] : [];
  };
  switch (node.op) {
    case "cmp": {
      if (!isOrdered(node.kind)) return null;
      const values = node.left.op === "signal" ? text(node.right) : node.right.op === "signal" ? text(node.left) : null;
      return values === null ? null : { kind: node.kind, values };
    }
    case "in":
      return isOrdered(node.kind) && node.value.op === "signal"
        ? { kind: node.kind, values: node.set.filter((v): v is string => typeof v === "string") }
        : null;
    case "in_cidr":
      return node.arg.op === "signal" ? { kind: "cidr", values: [...node.ranges] } : null;
    default:
      return null;
  }
}
