/**
 * Sorting table rows by a clicked column: numbers and text alike, missing values always
 * last (a trial without a kappa is not "the worst" nor "the best", it is unknown).
 */

export type SortValue = number | string | null | undefined;

export interface SortState {
  key: string;
  /** 1: ascending, -1: descending. */
  dir: 1 | -1;
}

/** The next sort after a click on `key`: a new column sorts descending (best first for
 * metrics), the same column flips. */
export function nextSort(current: SortState | null, key: string, firstDir: 1 | -1 = -1): SortState {
  if (current && current.key === key) return { key, dir: current.dir === 1 ? -1 : 1 };
  return { key, dir: firstDir };
}

/** A sorted copy of `rows` by `value(row)`; stable, missing values last in both directions. */
export function sortRows<T>(rows: readonly T[], value: (row: T) => SortValue, dir: 1 | -1): T[] {
  const keyed = rows.map((row, i) => ({ row, i, v: value(row) }));
  keyed.sort((a, b) => {
    const am = a.v === null || a.v === undefined || (typeof a.v === "number" && Number.isNaN(a.v));
    const bm = b.v === null || b.v === undefined || (typeof b.v === "number" && Number.isNaN(b.v));
    if (am || bm) return am && bm ? a.i - b.i : am ? 1 : -1;
    let c: number;
    if (typeof a.v === "number" && typeof b.v === "number") c = a.v - b.v;
    else c = String(a.v).localeCompare(String(b.v), undefined, { numeric: true });
    return c !== 0 ? c * dir : a.i - b.i;
  });
  return keyed.map((k) => k.row);
}
