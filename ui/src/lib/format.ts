/**
 * Number and text formatting shared by every screen: one place decides how a missing value,
 * an interval, a duration or a path reads, so that tables and cards agree.
 */
import type { Cell } from "./bindings";

/** What a missing or undefined number shows as (never a silent zero). */
export const MISSING = "—";

/** A number with `digits` decimals, or the missing mark. */
export function fmtNum(v: number | null | undefined, digits = 3): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return MISSING;
  // A true minus sign lines up with digits in tabular figures; "-0.000" would mislead.
  const text = v.toFixed(digits);
  return Number(text) === 0 ? (0).toFixed(digits) : text.replace("-", "−");
}

/** An interval `[low, high]`, or an empty string when the cell has none (0 resamples). */
export function fmtInterval(cell: Cell | null | undefined, digits = 3): string {
  if (!cell || cell.low === null || cell.high === null) return "";
  return `[${fmtNum(cell.low, digits)}, ${fmtNum(cell.high, digits)}]`;
}

/** A metric with its interval: `0.412 [0.300, 0.520]`. */
export function fmtCell(cell: Cell | null | undefined, digits = 3): string {
  if (!cell || cell.value === null) return MISSING;
  const ci = fmtInterval(cell, digits);
  return ci ? `${fmtNum(cell.value, digits)} ${ci}` : fmtNum(cell.value, digits);
}

/** A fraction as a percentage: 0.15 → `15.0%`. */
export function fmtPct(fraction: number | null | undefined, digits = 1): string {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) return MISSING;
  return `${(fraction * 100).toFixed(digits)}%`;
}

/** A count with thousands separators: 100000 → `100,000`. */
export function fmtInt(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return MISSING;
  return Math.round(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** A number of tokens or milliseconds: whole above 100, one decimal below. */
export function fmtAmount(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return MISSING;
  return Math.abs(v) >= 100 ? fmtInt(v) : v.toFixed(1);
}

/** A duration for people: `45 s`, `3 min 20 s`, `1 h 05 min`. */
export function fmtDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) {
    return MISSING;
  }
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) {
    const m = Math.floor(s / 60);
    const rest = s % 60;
    return rest ? `${m} min ${rest} s` : `${m} min`;
  }
  const h = Math.floor(s / 3600);
  const m = Math.round((s % 3600) / 60);
  return `${h} h ${String(m).padStart(2, "0")} min`;
}

/** The last component of a file path, on any platform. */
export function basename(path: string): string {
  const parts = path.split(/[\\/]/).filter((p) => p.length > 0);
  return parts.length ? parts[parts.length - 1] : path;
}

/** A file name without its last extension: `llmbar_natural.jsonl` → `llmbar_natural`. */
export function stem(path: string): string {
  const name = basename(path);
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(0, dot) : name;
}

/** A value safe to put in a data-testid: letters, digits, `-` and `_`. */
export function testIdPart(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]+/g, "-");
}
