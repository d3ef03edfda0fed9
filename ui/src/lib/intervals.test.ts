/** When the Results screen shows point estimates before intervals. */
import { describe, expect, it } from "vitest";
import { AT_ONCE, pointsFirst } from "./intervals";

describe("intervals", () => {
  it("asks for the default resamples at once, and shows points first beyond them", () => {
    expect(AT_ONCE).toBe(1000);
    expect(pointsFirst(0)).toBe(false);
    expect(pointsFirst(1000)).toBe(false);
    expect(pointsFirst(1001)).toBe(true);
    expect(pointsFirst(10000)).toBe(true);
  });
});
