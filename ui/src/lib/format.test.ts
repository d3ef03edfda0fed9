/** How numbers, intervals, durations and paths read. */
import { describe, expect, it } from "vitest";
import { basename, fmtAmount, fmtCell, fmtDuration, fmtInt, fmtNum, fmtPct, stem, testIdPart } from "./format";

describe("format", () => {
  it("formats numbers and missing values", () => {
    expect(fmtNum(0.41234)).toBe("0.412");
    expect(fmtNum(-0.0001)).toBe("0.000");
    expect(fmtNum(-0.25)).toBe("−0.250");
    expect(fmtNum(null)).toBe("—");
    expect(fmtNum(Number.NaN)).toBe("—");
  });

  it("formats a metric with its interval", () => {
    expect(fmtCell({ value: 0.412, low: 0.3, high: 0.52 })).toBe("0.412 [0.300, 0.520]");
    expect(fmtCell({ value: 0.412, low: null, high: null })).toBe("0.412");
    expect(fmtCell({ value: null, low: null, high: null })).toBe("—");
  });

  it("formats percentages, counts and amounts", () => {
    expect(fmtPct(0.15)).toBe("15.0%");
    expect(fmtInt(100000)).toBe("100,000");
    expect(fmtInt(999)).toBe("999");
    expect(fmtAmount(340.4)).toBe("340");
    expect(fmtAmount(2.25)).toBe("2.3");
  });

  it("formats durations", () => {
    expect(fmtDuration(45)).toBe("45 s");
    expect(fmtDuration(200)).toBe("3 min 20 s");
    expect(fmtDuration(120)).toBe("2 min");
    expect(fmtDuration(3900)).toBe("1 h 05 min");
    expect(fmtDuration(null)).toBe("—");
  });

  it("takes paths apart on any platform", () => {
    expect(basename("/a/b/llmbar_natural.jsonl")).toBe("llmbar_natural.jsonl");
    expect(basename("C:\\models\\x.gguf")).toBe("x.gguf");
    expect(stem("/a/b/llmbar_natural.jsonl")).toBe("llmbar_natural");
    expect(testIdPart("/m/SmolLM2 135M.gguf")).toBe("-m-SmolLM2-135M-gguf");
  });
});
