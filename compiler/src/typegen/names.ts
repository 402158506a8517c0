/**
 * The TypeScript name of a policy version's signals type: `payments.transfer` `1.2.0` is `PaymentsTransfer_1_2_0Signals`.
 *
 * json-schema-to-typescript passes every declared name through its own identifier cleaning; these names are fixed
 * points of it (letters, digits and `_`, never a leading digit, never `_` before a lowercase letter, never a lowercase
 * letter after a digit), so the name declared is the name computed here (compiler/test/typegen/names.test.ts).
 */
export function signalsTypeName(policyId: string, version: string): string {
  const policy = words(policyId).join("");
  return `${/^[0-9]/.test(policy) ? "Policy" : ""}${policy}_${words(version).join("_")}Signals`;
}

/** The alphanumeric runs of `text`, each starting with a capital, with a capital after every digit. */
function words(text: string): string[] {
  return (text.match(/[A-Za-z0-9]+/g) ?? []).map((w) => w.replace(/^[a-z]|(?<=[0-9])[a-z]/g, (c) => c.toUpperCase()));
}

/**
 * Names for every policy version, in the order given: two versions whose names would be the same (`a.b` and `a_b`,
 * `1.0.0-rc.1` and `1.0.0-rc-1`) are told apart by a suffix, `_2`, `_3`, on the later ones.
 */
export function uniqueNames(refs: readonly { readonly policyId: string; readonly version: string }[]): string[] {
  const taken = new Set<string>();
  return refs.map(({ policyId, version }) => {
    const base = signalsTypeName(policyId, version);
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
    taken.add(name);
    return name;
  });
}
