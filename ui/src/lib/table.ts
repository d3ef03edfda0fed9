/**
 * The results table (`report::table`, as `TableView`): its cells looked up by column key, and
 * the order of a sorted column. The table's figures are written in Rust; the app renders them
 * and never computes one.
 */
import type { Cell, TableCell, TableColumn, TableRow, TableView } from "./bindings";
import type { SortValue } from "./sort";

/** The cell of `row` in the column named `key`, or null where the table has no such column. */
export function cellOf(table: TableView, row: TableRow | null | undefined, key: string): TableCell | null {
  if (!row) return null;
  const i = table.columns.findIndex((c) => c.key === key);
  return i < 0 ? null : (row.cells[i] ?? null);
}

/** The number in a cell (for sorting and tips), or null. */
export function valueOf(table: TableView, row: TableRow | null | undefined, key: string): number | null {
  return cellOf(table, row, key)?.value ?? null;
}

/** A trial's row. */
export function trialRow(table: TableView, id: number): TableRow | null {
  return table.rows.find((r) => r.kind === "trial" && r.id === id) ?? null;
}

/** The columns the app's results table shows, with their index into each row's cells. */
export function shownColumns(table: TableView): { column: TableColumn; index: number }[] {
  return table.columns.map((column, index) => ({ column, index })).filter((c) => c.column.shown);
}

/** Figures read right-aligned; text, parameters, roles and standings left. */
export function isNumeric(column: TableColumn): boolean {
  return !["text", "param", "role", "standing"].includes(column.unit);
}

/** Lower is better for costs, latencies and failures: their first click sorts ascending. */
export function ascendingFirst(column: TableColumn): boolean {
  // An error (the mean absolute error) is better low, as costs are.
  if (column.key === "mae" || column.key.endsWith("_mae")) return true;
  return ["tokens", "milliseconds", "usd", "share", "standing", "param", "text"].includes(column.unit) && column.key !== "position_consistency";
}

const STANDING_RANK: Record<string, number> = { front: 0, indistinguishable: 1, dominated: 2, unavailable: 3, composed: 4 };

/** What a cell sorts by: its number, a standing's rank, else its text. */
export function sortValue(column: TableColumn, cell: TableCell | undefined): SortValue {
  if (!cell || cell.text === "" || cell.text === "—") return cell?.value ?? null;
  if (column.unit === "standing") return STANDING_RANK[cell.text] ?? 5;
  return cell.value ?? cell.text;
}

/** A cell's interval as the formatting helpers take it. */
export function interval(cell: TableCell | null | undefined): Cell | null {
  if (!cell) return null;
  return { value: cell.value, low: cell.low, high: cell.high };
}
