/**
 * Reading settings from the environment: each reader names the variable and what it accepts in its error, so every
 * bad value is a start-up error a person can act on. Shared by config.ts and each storage engine's own settings.
 */
import { isAbsolute, resolve } from "node:path";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export type Env = Readonly<Record<string, string | undefined>>;

export function text(env: Env, name: string): string | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  if (value.trim() === "") throw new ConfigError(`${name} is set but empty; unset it or give it a value`);
  return value;
}

export function flag(env: Env, name: string, fallback: boolean): boolean {
  const value = text(env, name);
  if (value === undefined) return fallback;
  if (value === "on" || value === "true" || value === "1") return true;
  if (value === "off" || value === "false" || value === "0") return false;
  throw new ConfigError(`${name} must be \`on\` or \`off\`, not \`${value}\``);
}

export function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = text(env, name);
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(`${name} must be one of ${allowed.map((a) => `\`${a}\``).join(", ")}, not \`${value}\``);
  }
  return value as T;
}

export function path(value: string | undefined, cwd: string): string | null {
  return value === undefined ? null : isAbsolute(value) ? value : resolve(cwd, value);
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = text(env, name);
  if (value === undefined) return fallback;
  if (!/^[0-9]+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, not \`${value}\``);
  }
  return Number(value);
}

/** A file of secrets (a key file, the signing key file) readable by group or others is refused; `variable` names it. */
export function assertOwnerOnly(file: string, mode: number, variable?: string): void {
  if ((mode & 0o077) !== 0) {
    const what = variable === undefined ? `\`${file}\`` : `${variable} \`${file}\``;
    throw new ConfigError(`${what} is readable by other users (mode ${(mode & 0o777).toString(8)}); run \`chmod 600 ${file}\``);
  }
}
