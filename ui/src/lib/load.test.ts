import { describe, expect, it } from "vitest";
import { advance, parseLevels, progressText, started } from "./load";

describe("load ramps", () => {
  it("reads levels as a sorted set of whole numbers", () => {
    expect(parseLevels("8, 1 2,4,4")).toEqual({ levels: [1, 2, 4, 8], error: null });
    expect(parseLevels(" ").error).toContain("one or more");
    expect(parseLevels("1, 0").error).toBe('levels: "0" is not a whole number from 1 to 256');
    expect(parseLevels("2.5").error).toContain('"2.5"');
  });

  it("folds the ramp's updates into its progress", () => {
    let p = started();
    expect(progressText(p)).toBe("warming up…");
    p = advance(p, { event: "level", concurrency: 4, level_idx: 2, n_levels: 4, requests: 24 });
    p = advance(p, { event: "request", concurrency: 4, done: 12 });
    expect(progressText(p)).toBe("level 3 of 4 (4 in flight): 12 / 24 requests");
    p = advance(p, { event: "finished", knee: 4, knee_reason: "throughput stops rising at 4" });
    expect(p.running).toBe(false);
    expect(p.message).toBe("Ramp finished: knee at 4.");
    const failed = advance(started(), {
      event: "failed",
      error: { code: "invalid_input", message: "no trial 9", details: [] },
    });
    expect([failed.failed, failed.message]).toEqual([true, "no trial 9"]);
  });
});
