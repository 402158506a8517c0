/**
 * Who may call a route (docs/sidecar.md, "Scoped keys"): `public` (no key), `deciding` (the callers that evaluate and
 * execute) or `reading` (the operators: audit trail, metrics, bundles and reload). A key opens one scope or both.
 */
export type Scope = "deciding" | "reading";
export type Access = Scope | "public";
