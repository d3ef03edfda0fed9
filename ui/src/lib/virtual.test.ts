/** The virtualised list's window and page cache. */
import { describe, expect, it } from "vitest";
import { PageCache, pagesOf, visibleRange } from "./virtual";

describe("visibleRange", () => {
  it("covers the viewport plus overscan", () => {
    expect(visibleRange(0, 320, 32, 100_000, 5)).toEqual({ start: 0, end: 16 });
    expect(visibleRange(3200, 320, 32, 100_000, 5)).toEqual({ start: 95, end: 116 });
  });

  it("stays within the list", () => {
    expect(visibleRange(32 * 99_990, 320, 32, 100_000, 5)).toEqual({ start: 99_985, end: 100_000 });
    expect(visibleRange(0, 320, 32, 3, 5)).toEqual({ start: 0, end: 3 });
    expect(visibleRange(0, 320, 32, 0)).toEqual({ start: 0, end: 0 });
  });

  it("renders a bounded number of rows however far the list goes", () => {
    for (const top of [0, 1e5, 1e6, 3.2e6]) {
      const r = visibleRange(top, 600, 32, 100_000);
      expect(r.end - r.start).toBeLessThanOrEqual(Math.ceil(600 / 32) + 1 + 12);
    }
  });
});

describe("PageCache", () => {
  it("finds rows by index and reports missing pages", () => {
    const cache = new PageCache<number>(100);
    expect(pagesOf({ start: 95, end: 205 }, 100)).toEqual([0, 1, 2]);
    cache.set(1, Array.from({ length: 100 }, (_, i) => 100 + i));
    expect(cache.row(150)).toBe(150);
    expect(cache.row(50)).toBeUndefined();
    expect(cache.missing({ start: 95, end: 205 })).toEqual([0, 2]);
  });

  it("drops the least recently used page past its bound", () => {
    const cache = new PageCache<number>(10, 2);
    cache.set(0, [0]);
    cache.set(1, [10]);
    cache.touch(0);
    cache.set(2, [20]);
    expect(cache.has(0)).toBe(true);
    expect(cache.has(1)).toBe(false);
    expect(cache.size).toBe(2);
  });
});
