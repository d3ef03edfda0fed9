/** Sorting tables by a clicked column. */
import { describe, expect, it } from "vitest";
import { nextSort, sortRows } from "./sort";

describe("sort", () => {
  it("sorts numbers with missing values last either way", () => {
    const rows = [{ v: 0.2 }, { v: null }, { v: 0.5 }, { v: 0.1 }];
    expect(sortRows(rows, (r) => r.v, -1).map((r) => r.v)).toEqual([0.5, 0.2, 0.1, null]);
    expect(sortRows(rows, (r) => r.v, 1).map((r) => r.v)).toEqual([0.1, 0.2, 0.5, null]);
  });

  it("sorts text naturally", () => {
    const rows = ["#10", "#2", "#1"];
    expect(sortRows(rows, (r) => r, 1)).toEqual(["#1", "#2", "#10"]);
  });

  it("flips on a second click", () => {
    const first = nextSort(null, "kappa");
    expect(first).toEqual({ key: "kappa", dir: -1 });
    expect(nextSort(first, "kappa")).toEqual({ key: "kappa", dir: 1 });
    expect(nextSort(first, "label", 1)).toEqual({ key: "label", dir: 1 });
  });
});
