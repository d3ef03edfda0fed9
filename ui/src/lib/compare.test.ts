/** The one-sentence reading of a paired comparison. */
import { describe, expect, it } from "vitest";
import type { Comparison } from "./bindings";
import { compareReading, driftReading, fmtP } from "./compare";

const base: Comparison = {
  first: 3,
  second: 1,
  metric: "kappa",
  n_pairs: 20,
  first_only: 5,
  second_only: 1,
  mcnemar_p: 0.2188,
  difference: { value: 0.14, low: -0.05, high: 0.33 },
  first_experiment: "e",
  second_experiment: "e",
  drift: {
    n_calls: 40,
    n_items: 20,
    only_first: 0,
    only_second: 0,
    failed_calls: 0,
    categories: ["A", "B"],
    matrix: [
      [20, 2],
      [4, 14],
    ],
    flips: 6,
    flip_rate: { value: 0.15, low: 0.05, high: 0.275 },
    toward_humans: 1,
    away_from_humans: 3,
    kappa: 0.69,
    kl_mean: null,
    js_mean: null,
    moved: [],
  },
};

describe("compareReading", () => {
  it("says when the interval includes 0", () => {
    expect(compareReading(base, "#3", "#1")).toBe(
      "The data cannot tell #3 from #1 on kappa: the 95% interval of the difference, [−0.050, 0.330], includes 0 (McNemar p = 0.219).",
    );
  });

  it("names the better trial when the interval excludes 0", () => {
    const c = { ...base, difference: { value: -0.2, low: -0.3, high: -0.1 }, mcnemar_p: 0.0004 };
    expect(compareReading(c, "#3", "#1")).toBe(
      "#1 agrees with the humans better than #3 on kappa: the difference −0.200 has a 95% interval [−0.300, −0.100] that excludes 0 (McNemar p < 0.001).",
    );
  });

  it("falls back on McNemar without resamples", () => {
    const c = { ...base, difference: { value: 0.14, low: null, high: null }, mcnemar_p: 0.01 };
    expect(compareReading(c, "#3", "#1")).toContain("#3 is right more often where the two differ");
    expect(compareReading({ ...base, n_pairs: 0 }, "#3", "#1")).toBe("#3 and #1 share no judged items: nothing to compare.");
  });

  it("says how many verdicts flipped, and which way", () => {
    expect(driftReading(base.drift, "#3", "#1")).toBe(
      "6 of 40 calls flipped from #3 to #1 (15.0%, 95% interval 5.0%–27.5%): 1 toward the humans, 3 away, 2 from one wrong verdict to another. Kappa between the two: 0.690.",
    );
    const left = { ...base.drift, only_second: 2, failed_calls: 1, kappa: null };
    expect(driftReading(left, "#3", "#1")).toContain("2 from one wrong verdict to another. 3 calls only one made, or that failed, are left out.");
  });

  it("formats p-values", () => {
    expect(fmtP(0.0312)).toBe("p = 0.031");
    expect(fmtP(0.00001)).toBe("p < 0.001");
  });
});
