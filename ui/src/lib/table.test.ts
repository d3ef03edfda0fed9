import { describe, expect, it } from "vitest";
import type { TableCell, TableColumn, TableUnit, TableView } from "./bindings";
import { ascendingFirst, cellOf, isNumeric, shownColumns, sortValue, trialRow, valueOf } from "./table";

const column = (key: string, unit: TableUnit, shown = true): TableColumn => ({ key, title: key, unit, shown });
const cell = (text: string, value: number | null = null): TableCell => ({ text, interval: "", value, low: null, high: null });

const table: TableView = {
  ranking: "the highest kappa as shown",
  columns: [column("temperature", "param"), column("kappa", "estimate"), column("latency_n", "count", false), column("front_quality_cost", "standing")],
  rows: [
    { kind: "trial", id: 3, name: "#3", label: "#3 temp=0.7", description: null, best: true, recommended: false, cells: [cell("0.7"), cell("0.412", 0.412), cell("20", 20), cell("front")] },
    { kind: "panel", id: null, name: "vote3", label: "vote3 panel", description: "panel: majority of #1, #3", best: false, recommended: false, cells: [cell(""), cell("0.300", 0.3), cell("20", 20), cell("composed")] },
  ],
  baselines: [],
};

describe("the results table", () => {
  it("finds a cell by its column's key", () => {
    expect(cellOf(table, table.rows[0], "kappa")?.text).toBe("0.412");
    expect(valueOf(table, table.rows[1], "latency_n")).toBe(20);
    expect(cellOf(table, table.rows[0], "spearman")).toBeNull();
    expect(trialRow(table, 3)?.name).toBe("#3");
    expect(trialRow(table, 4)).toBeNull();
  });

  it("shows the columns it says, figures to the right", () => {
    expect(shownColumns(table).map((c) => c.index)).toEqual([0, 1, 3]);
    expect(isNumeric(table.columns[1])).toBe(true);
    expect(isNumeric(table.columns[0])).toBe(false);
    expect(ascendingFirst(column("latency_p95_ms", "milliseconds"))).toBe(true);
    expect(ascendingFirst(column("mae", "estimate"))).toBe(true);
    expect(ascendingFirst(table.columns[1])).toBe(false);
  });

  it("sorts standings by rank and a missing figure as missing", () => {
    expect(sortValue(table.columns[3], cell("front"))).toBeLessThan(sortValue(table.columns[3], cell("composed")) as number);
    expect(sortValue(table.columns[1], cell("—"))).toBeNull();
    expect(sortValue(table.columns[1], cell("0.412", 0.412))).toBe(0.412);
  });
});
