import { describe, expect, it } from "vitest";
import type { DatasetSummary, EstimateView } from "./bindings";
import { advance, estimateDatasets, judgedText, parseWidth, progressText, started } from "./estimate";

const dataset = (name: string, task: string, n_unlabelled: number): DatasetSummary => ({
  name,
  task,
  n_items: 10,
  n_with_reference: 0,
  n_unlabelled,
  source: `${name}.jsonl`,
  content_hash: "h",
  metrics: [],
  mapping: null,
});

describe("estimates on items without a label", () => {
  it("offers the experiment's dataset first, then others of its task with such items", () => {
    const all = [dataset("b", "pairwise", 3), dataset("own", "pairwise", 0), dataset("r", "single", 5), dataset("c", "pairwise", 0)];
    expect(estimateDatasets(all, "own", "pairwise").map((d) => d.name)).toEqual(["own", "b"]);
  });

  it("reads a width, or none", () => {
    expect(parseWidth(" ")).toEqual({ width: null, error: null });
    expect(parseWidth("0.1")).toEqual({ width: 0.1, error: null });
    expect(parseWidth("0").error).toBe('width: "0" is not a number above 0');
    expect(parseWidth("wide").error).toContain('"wide"');
  });

  it("folds the updates into its progress", () => {
    let p = started();
    expect(progressText(p)).toBe("starting…");
    p = advance(p, { event: "loading", model: "default" });
    expect(progressText(p)).toBe("loading default…");
    p = advance(p, { event: "progress", done: 12, total: 40, n_failed: 1 });
    expect(progressText(p)).toBe("judging: 12 / 40 verdicts (1 failed)");
    const failed = advance(p, { event: "failed", error: { code: "invalid_input", message: "no trial 9", details: [] } });
    expect([failed.running, failed.error]).toEqual([false, "no trial 9"]);
  });

  it("says how the items were judged", () => {
    const e = { judged_now: 20, already_done: 0, n_errors: 0, interrupted: false, stopped_by: null } as EstimateView;
    expect(judgedText(e)).toBe("judged 20 verdicts (0 already stored)");
    expect(judgedText({ ...e, judged_now: 0, already_done: 20 })).toBe("all 20 verdicts were stored already");
    expect(judgedText({ ...e, n_errors: 2 })).toBe("judged 20 verdicts (0 already stored); 2 calls failed (recorded): start it again to judge the rest");
  });
});
