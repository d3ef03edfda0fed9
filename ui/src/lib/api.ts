/**
 * The app's commands as promises that resolve to their data or throw a `CommandError`
 * carrying the backend's `AppError` (its code is what screens react to; they never match
 * on message text). `bindings.ts` is generated from Rust and stays untouched.
 */
import { commands, type AppError, type AppInfo, type ErrorCode } from "./bindings";

export { commands };

/** A command that failed, with the backend's error. */
export class CommandError extends Error {
  constructor(readonly appError: AppError) {
    super(appError.message);
  }
}

type Outcome<T> = { status: "ok"; data: T } | { status: "error"; error: AppError };

/** The data of a command's result, or a thrown `CommandError`. */
export async function unwrap<T>(result: Promise<Outcome<T>>): Promise<T> {
  const r = await result;
  if (r.status === "error") throw new CommandError(r.error);
  return r.data;
}

function isAppError(e: unknown): e is AppError {
  return typeof e === "object" && e !== null && "code" in e && "message" in e;
}

/** Any thrown value as an `AppError`, for an error panel. */
export function toAppError(e: unknown): AppError {
  if (e instanceof CommandError) return e.appError;
  if (isAppError(e)) return { ...e, details: Array.isArray(e.details) ? e.details : [] };
  const message = e instanceof Error ? e.message : String(e);
  return { code: "internal", message, details: [] };
}

/** The error code of a thrown value, if the backend gave one. */
export function errorCode(e: unknown): ErrorCode | null {
  if (e instanceof CommandError) return e.appError.code;
  return isAppError(e) ? e.code : null;
}

let info: Promise<AppInfo> | null = null;

/** The app's facts (version, database, default model, bundled datasets), asked once. */
export function appInfo(): Promise<AppInfo> {
  if (!info) {
    info = commands.appInfo().catch((e) => {
      info = null;
      throw e;
    });
  }
  return info;
}
