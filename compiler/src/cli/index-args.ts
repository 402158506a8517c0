import { ALIAS_PATTERN, POLICY_ID_PATTERN, isBundleRef } from "@writ/runtime";
import { CliError } from "./io.js";

/** `--alias policyId@alias=version`; an empty version (`policyId@alias=`) removes the alias. */
export interface AliasArg {
  readonly policyId: string;
  readonly alias: string;
  readonly version: string | null;
}

export function parseAliasArg(arg: string): AliasArg {
  const match = /^([^@=]+)@([^@=]+)=([^@=]*)$/.exec(arg);
  const [, policyId = "", alias = "", version = ""] = match ?? [];
  const validVersion = version === "" ? POLICY_ID_PATTERN.test(policyId) : isBundleRef(policyId, version);
  if (!match || !ALIAS_PATTERN.test(alias) || !validVersion) {
    throw new CliError(
      `bundle index: --alias \`${arg}\` is not \`policyId@alias=version\` (an alias is a lowercase letter, then lowercase letters, digits or \`-\`; an empty version removes the alias)`,
    );
  }
  return { policyId, alias, version: version === "" ? null : version };
}

const UNITS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `--expires-in DURATION`: a whole number of seconds, minutes, hours or days (`45s`, `90m`, `12h`, `30d`), in ms. */
export function parseDuration(arg: string): number {
  const match = /^([1-9][0-9]{0,5})([smhd])$/.exec(arg);
  if (!match) throw new CliError(`bundle index: --expires-in \`${arg}\` is not a duration such as \`30d\`, \`12h\`, \`90m\` or \`45s\``);
  return Number(match[1]) * UNITS[match[2] as keyof typeof UNITS];
}

/** `--serial N`: a positive safe integer. */
export function parseSerial(arg: string): number {
  const serial = /^[1-9][0-9]*$/.test(arg) ? Number(arg) : NaN;
  if (!Number.isSafeInteger(serial)) throw new CliError(`bundle index: --serial \`${arg}\` is not a positive integer`);
  return serial;
}
