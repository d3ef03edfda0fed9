/**
 * Comma-separated value lists, as the experiment builder's sweep fields take them
 * (`0, 0.7`). Parsing is strict and names the field, so that a typo shows up beside the
 * input before the experiment ever reaches the engine.
 */

export type Parsed<T> = { ok: true; values: T[] } | { ok: false; error: string };

/** The non-empty, trimmed pieces of a comma-separated text. */
export function splitList(text: string): string[] {
  return text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
}

/** Rejects a value listed twice: the engine refuses duplicates, as each would be a trial. */
function unique<T>(field: string, values: T[], show: (v: T) => string): Parsed<T> {
  for (let i = 0; i < values.length; i++) {
    if (values.indexOf(values[i]) !== i) {
      return { ok: false, error: `${field}: ${show(values[i])} is listed twice` };
    }
  }
  return { ok: true, values };
}

export interface Range {
  min: number;
  max: number;
  /** The minimum itself is not allowed (top_p must be above 0). */
  exclusiveMin?: boolean;
}

function inRange(v: number, r: Range): boolean {
  return (r.exclusiveMin ? v > r.min : v >= r.min) && v <= r.max;
}

function rangeText(r: Range, integer: boolean): string {
  if (integer) return `between ${r.min} and ${r.max}`;
  return `${r.exclusiveMin ? "above" : "at least"} ${r.min} and at most ${r.max}`;
}

/** A list of decimal numbers within `range`; at least one. */
export function parseFloats(field: string, text: string, range: Range): Parsed<number> {
  const parts = splitList(text);
  if (parts.length === 0) return { ok: false, error: `${field}: needs at least one value` };
  const values: number[] = [];
  for (const p of parts) {
    // Number("") and Number("0x1") are accepted by JS; an experiment wants plain decimals.
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(p)) {
      return { ok: false, error: `${field}: "${p}" is not a number` };
    }
    const v = Number(p);
    if (!Number.isFinite(v) || !inRange(v, range)) {
      return { ok: false, error: `${field}: ${p} must be ${rangeText(range, false)}` };
    }
    values.push(v);
  }
  return unique(field, values, String);
}

/** A list of whole numbers within `range`; at least one. */
export function parseInts(field: string, text: string, range: Range): Parsed<number> {
  const parts = splitList(text);
  if (parts.length === 0) return { ok: false, error: `${field}: needs at least one value` };
  const values: number[] = [];
  for (const p of parts) {
    if (!/^[+-]?\d+$/.test(p)) {
      return { ok: false, error: `${field}: "${p}" is not a whole number` };
    }
    const v = Number(p);
    if (!Number.isSafeInteger(v) || !inRange(v, range)) {
      return { ok: false, error: `${field}: ${p} must be ${rangeText(range, true)}` };
    }
    values.push(v);
  }
  return unique(field, values, String);
}

/** A list of words out of `allowed`; at least one. */
export function parseChoices(field: string, text: string, allowed: readonly string[]): Parsed<string> {
  const parts = splitList(text);
  if (parts.length === 0) return { ok: false, error: `${field}: needs at least one value` };
  for (const p of parts) {
    if (!allowed.includes(p)) {
      const expected = allowed.map((a) => `"${a}"`).join(", ");
      return { ok: false, error: `${field}: "${p}" is not one of ${expected}` };
    }
  }
  return unique(field, parts, (v) => `"${v}"`);
}

/** One whole number within `range`, or `null` for an empty (optional) field. */
export function parseOptionalInt(field: string, text: string, range: Range): Parsed<number | null> {
  if (text.trim() === "") return { ok: true, values: [null] };
  const parsed = parseInts(field, text, range);
  if (!parsed.ok) return parsed;
  if (parsed.values.length > 1) return { ok: false, error: `${field}: takes one value` };
  return parsed;
}
