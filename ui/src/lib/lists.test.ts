/** Comma-separated sweep values. */
import { describe, expect, it } from "vitest";
import { parseChoices, parseFloats, parseInts, parseOptionalInt, splitList } from "./lists";

describe("lists", () => {
  it("splits on commas and ignores blanks", () => {
    expect(splitList(" 0, 0.7 ,, 1 ")).toEqual(["0", "0.7", "1"]);
    expect(splitList("   ")).toEqual([]);
  });

  it("parses decimals within a range", () => {
    expect(parseFloats("t", "0, 0.7, .5, 1e-1", { min: 0, max: 10 })).toEqual({ ok: true, values: [0, 0.7, 0.5, 0.1] });
    expect(parseFloats("t", "", { min: 0, max: 1 })).toEqual({ ok: false, error: "t: needs at least one value" });
    expect(parseFloats("t", "0x1", { min: 0, max: 10 })).toEqual({ ok: false, error: 't: "0x1" is not a number' });
    expect(parseFloats("t", "11", { min: 0, max: 10 })).toEqual({ ok: false, error: "t: 11 must be at least 0 and at most 10" });
    expect(parseFloats("t", "0.5, 0.50", { min: 0, max: 1 })).toEqual({ ok: false, error: "t: 0.5 is listed twice" });
  });

  it("parses whole numbers within a range", () => {
    expect(parseInts("n", "0,1, 2", { min: 0, max: 64 })).toEqual({ ok: true, values: [0, 1, 2] });
    expect(parseInts("n", "1.0", { min: 0, max: 64 })).toEqual({ ok: false, error: 'n: "1.0" is not a whole number' });
    expect(parseInts("n", "65", { min: 0, max: 64 })).toEqual({ ok: false, error: "n: 65 must be between 0 and 64" });
  });

  it("parses choices", () => {
    expect(parseChoices("order", "ab, both", ["ab", "ba", "both"])).toEqual({ ok: true, values: ["ab", "both"] });
    expect(parseChoices("order", "ab, ab", ["ab"])).toEqual({ ok: false, error: 'order: "ab" is listed twice' });
  });

  it("treats an empty optional number as absent", () => {
    expect(parseOptionalInt("items", " ", { min: 1, max: 10 })).toEqual({ ok: true, values: [null] });
    expect(parseOptionalInt("items", "3", { min: 1, max: 10 })).toEqual({ ok: true, values: [3] });
    expect(parseOptionalInt("items", "3, 4", { min: 1, max: 10 })).toEqual({ ok: false, error: "items: takes one value" });
  });
});
