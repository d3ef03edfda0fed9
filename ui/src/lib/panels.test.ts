import { describe, expect, it } from "vitest";
import type { PanelView } from "./bindings";
import { freeName, panelInput, panelText, rules } from "./panels";

const panel = (name: string, ties: string | null = null): PanelView => ({
  name,
  label: `${name} panel`,
  members: [1, 2, 3],
  rule: "majority",
  ties,
  from_file: false,
  members_alpha: { value: 0.4, low: 0.2, high: 0.6 },
  members_n: 10,
  contributions: [],
  reading: "",
});

describe("panels", () => {
  it("offers a mean only for ratings", () => {
    expect(rules("pairwise").map((r) => r.value)).toEqual(["majority", "distribution"]);
    expect(rules("single").map((r) => r.value)).toEqual(["majority", "mean", "distribution"]);
  });

  it("names a new panel with the first free name", () => {
    expect(freeName([])).toBe("panel1");
    expect(freeName([panel("panel1"), panel("panel3")])).toBe("panel2");
  });

  it("asks for a name and two members, and sends ties only with a majority", () => {
    expect(panelInput(" ", [1, 2], "majority", "").error).toBe("Name the panel.");
    expect(panelInput("p", [1], "majority", "").error).toBe("Choose two or more trials.");
    expect(panelInput(" p ", [1, 2], "majority", "first").input).toEqual({ name: "p", members: [1, 2], rule: "majority", ties: "first" });
    expect(panelInput("p", [1, 2], "majority", "").input?.ties).toBeNull();
    expect(panelInput("p", [1, 2], "distribution", "tie").input?.ties).toBeNull();
  });

  it("says how a panel is made", () => {
    expect(panelText(panel("v", "tie"))).toBe("majority of #1, #2, #3 (a split vote: tie)");
    expect(panelText(panel("v"))).toBe("majority of #1, #2, #3");
  });
});
