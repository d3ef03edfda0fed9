import { describe, expect, it } from "vitest";
import { advance, candidateText, idle, progressText, started } from "./align";

describe("an alignment's progress", () => {
  it("folds the search's updates into where it stands", () => {
    let p = started();
    p = advance(p, { event: "planned", plan: "plan: 1 generation", generations: 1, budget: 500 });
    expect(progressText(p)).toBe("scoring the start; 0 of 500 calls");
    p = advance(p, { event: "generation", generation: 1, n_generations: 1 });
    p = advance(p, { event: "candidate", id: 2, parent: 0, kind: "examples", rejected: null });
    p = advance(p, { event: "candidate", id: 1, parent: 0, kind: "rewrite", rejected: "the reply is empty" });
    p = advance(p, { event: "round", generation: 1, round: 2, n_rounds: 4, n_items: 30, survivors: 3 });
    p = advance(p, { event: "spent", calls: 121, budget: 500 });
    expect(progressText(p)).toBe("generation 1 of 1, round 2 of 4: 3 candidates on 30 dev items; 121 of 500 calls");
    expect(p.candidates.map(candidateText)).toEqual([
      "candidate 1 (rewrite of 0): rejected: the reply is empty",
      "candidate 2 (examples of 0)",
    ]);
    p = advance(p, { event: "finished", text: "alignment …", verdict: "not confirmed", spent: 301 });
    expect([p.running, p.verdict, p.spent]).toEqual([false, "not confirmed", 301]);
  });

  it("keeps a failure's message", () => {
    const p = advance(started(), { event: "failed", error: { code: "invalid_input", message: "no test split", details: [] } });
    expect([p.running, p.failed, p.message]).toEqual([false, true, "no test split"]);
    expect(idle.running).toBe(false);
  });
});
