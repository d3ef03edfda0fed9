import { describe, expect, it } from "vitest";
import { areRatings, fromGuess, labelRows, mappingInput } from "./mapping";

describe("the import wizard's mapping", () => {
  it("splits a guess into fields and criteria", () => {
    const g = fromGuess([
      { target: "question", path: "prompt" },
      { target: "human_labels.coherence", path: "coherence" },
    ]);
    expect(g.fields).toEqual({ question: "prompt" });
    expect(g.criteria).toEqual([{ name: "coherence", path: "coherence" }]);
  });

  it("sends the fields given, in Judgelab's order, and the labels given", () => {
    const m = mappingInput(
      { human_label: "winner", question: " conversation_a[0].content ", id: "" },
      [{ name: "coherence", path: "c" }, { name: "", path: "x" }],
      [
        { value: "model_a", label: "A" },
        { value: "other", label: "" },
      ],
      " ",
    );
    expect(m.fields).toEqual([
      { target: "question", path: "conversation_a[0].content" },
      { target: "human_label", path: "winner" },
      { target: "human_labels.coherence", path: "c" },
    ]);
    expect(m.labels).toEqual([{ value: "model_a", label: "A" }]);
    expect(m.rescale).toBeNull();
    expect(mappingInput({ question: "q" }, [], [], "0-4:1-5").rescale).toBe("0-4:1-5");
  });

  it("tells ratings from label words", () => {
    expect(areRatings([{ label: "3", n: 2 }, { label: "4.5", n: 1 }])).toBe(true);
    expect(areRatings([{ label: "model_a", n: 2 }, { label: "3", n: 1 }])).toBe(false);
    expect(areRatings([])).toBe(false);
    expect(labelRows([{ label: "model_a", n: 2 }, { label: "x", n: 1 }], [{ value: "model_a", label: "A" }])).toEqual([
      { value: "model_a", label: "A" },
      { value: "x", label: "" },
    ]);
  });
});
