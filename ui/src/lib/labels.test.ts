import { describe, expect, it } from "vitest";
import type { QueuedItem } from "./bindings";
import { keyLabel, labelChoices, parseChoice, votesText } from "./labels";

const keys = [
  { key: "a", label: "A", title: "A is better" },
  { key: "b", label: "B", title: "B is better" },
  { key: "t", label: "tie", title: "a tie" },
];

const item = (votes: QueuedItem["votes"]): QueuedItem => ({
  id: "i1",
  question: "q",
  answer_a: "a",
  answer_b: "b",
  answer: null,
  reference: null,
  original: "A",
  disagreement: 1,
  n_votes: 2,
  votes,
});

describe("labels", () => {
  it("reads a key in either case and nothing else", () => {
    expect(keyLabel(keys, "A")?.label).toBe("A");
    expect(keyLabel(keys, "t")?.label).toBe("tie");
    expect(keyLabel(keys, "x")).toBeNull();
  });

  it("says what the trials said, failures too", () => {
    expect(votesText(item([]))).toBe("No trial has judged it.");
    expect(
      votesText(
        item([
          { trial_id: 1, verdicts: ["A"] },
          { trial_id: 2, verdicts: ["B", null] },
        ]),
      ),
    ).toBe("The trials said: #1 A · #2 B failed.");
  });

  it("offers each annotator's labels, and everyone's where there are several", () => {
    expect(labelChoices([]).map((c) => c.value)).toEqual(["original|"]);
    expect(labelChoices(["ann"]).map((c) => c.value)).toEqual(["original|", "annotations|ann", "both|ann"]);
    expect(labelChoices(["ann", "bob"]).map((c) => c.value)).toContain("annotations|");
    expect(parseChoice("both|ann")).toEqual({ kind: "both", annotator: "ann" });
    expect(parseChoice("original|")).toEqual({ kind: "original", annotator: null });
  });
});
