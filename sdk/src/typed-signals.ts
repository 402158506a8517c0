/**
 * Typed signals (docs/sdk.md "Typed signals"): the clients take a map from policy id and version to the type of that
 * version's signals, as `writ typegen` generates it (`WritPolicies`), and check each request's signals against the
 * type of the version it names. Without one they take `UntypedPolicies`, under which every request type is the
 * wire's: any policy id, any version, signals any JSON object, as before typed signals existed.
 */
import type { DryRunRequest, EvaluateRequest, ExecuteRequest, Signals } from "@writ/wire";

/**
 * The default: any policy id and version, their signals any JSON object (`Readonly<Record<string, unknown>>`).
 * A generated map is an interface such as `{ "payments.transfer": { "1.2.0": PaymentsTransfer_1_2_0Signals } }`.
 */
export type UntypedPolicies = Readonly<Record<string, Readonly<Record<string, Signals>>>>;

/** The policy ids a map types: every string under `UntypedPolicies`. */
export type PolicyIdOf<Policies> = keyof Policies & string;

/**
 * The signals type of policy `Id` at `Version`. A version the map does not list (an alias such as `stable`, which the
 * sidecar resolves only when the request arrives) gets the union of every listed version's signals: a member no
 * version declares is refused, and so is a value no version accepts.
 */
export type SignalsOf<Policies, Id extends keyof Policies, Version extends string> = Id extends keyof Policies
  ? Version extends keyof Policies[Id]
    ? Policies[Id][Version]
    : Policies[Id][keyof Policies[Id]]
  : never;

/** `Request` with its policy id and version as given and its `SignalsKey` member of that version's signals type. */
type Typed<Request, SignalsKey extends keyof Request, Policies, Id extends keyof Policies, Version extends string> = Omit<
  Request,
  "policyId" | "policyVersion" | SignalsKey
> & { readonly policyId: Id; readonly policyVersion: Version } & { readonly [K in SignalsKey]: SignalsOf<Policies, Id, Version> };

/** `POST /evaluate` with `verifiedSignals` of the named version's type. */
export type TypedEvaluateRequest<Policies, Id extends keyof Policies, Version extends string> = Typed<
  EvaluateRequest,
  "verifiedSignals",
  Policies,
  Id,
  Version
>;

/** The dry run's and `POST /simulate`'s body with `signals` of the named version's type. */
export type TypedDryRunRequest<Policies, Id extends keyof Policies, Version extends string> = Typed<
  DryRunRequest,
  "signals",
  Policies,
  Id,
  Version
>;

/** The legacy `POST /execute` body with `signals` of the named version's type. */
export type TypedExecuteRequest<Policies, Id extends keyof Policies, Version extends string> = Typed<
  ExecuteRequest,
  "signals",
  Policies,
  Id,
  Version
>;
