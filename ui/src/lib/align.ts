// An alignment's progress ("Improve this judge"), kept apart from its panel so that Vitest
// can check it: what each update from the search says, folded into where it stands.
import type { AlignUpdate } from "./bindings";

/** A candidate as the progress lists it. */
export interface CandidateLine {
  id: number;
  parent: number | null;
  kind: string;
  rejected: string | null;
}

/** Where a search stands, folded from its updates. */
export interface AlignProgress {
  running: boolean;
  plan: string | null;
  generation: number;
  nGenerations: number;
  round: string | null;
  candidates: CandidateLine[];
  spent: number;
  budget: number | null;
  /** When finished: the outcome in words, and whether the best was confirmed. */
  outcome: string | null;
  verdict: string | null;
  message: string | null;
  failed: boolean;
}

export const idle: AlignProgress = {
  running: false,
  plan: null,
  generation: 0,
  nGenerations: 0,
  round: null,
  candidates: [],
  spent: 0,
  budget: null,
  outcome: null,
  verdict: null,
  message: null,
  failed: false,
};

export function started(): AlignProgress {
  return { ...idle, running: true };
}

export function advance(p: AlignProgress, u: AlignUpdate): AlignProgress {
  switch (u.event) {
    case "planned":
      return { ...p, plan: u.plan, nGenerations: u.generations, budget: u.budget };
    case "generation":
      return { ...p, generation: u.generation, nGenerations: u.n_generations };
    case "candidate": {
      const line = { id: u.id, parent: u.parent, kind: u.kind, rejected: u.rejected };
      const candidates = [...p.candidates.filter((c) => c.id !== u.id), line].sort((a, b) => a.id - b.id);
      return { ...p, candidates };
    }
    case "round":
      return {
        ...p,
        round: `round ${u.round} of ${u.n_rounds}: ${u.survivors} candidate${u.survivors === 1 ? "" : "s"} on ${u.n_items} dev items`,
      };
    case "spent":
      return { ...p, spent: u.calls, budget: u.budget };
    case "finished":
      return { ...p, running: false, outcome: u.text, verdict: u.verdict, spent: u.spent };
    case "failed":
      return { ...p, running: false, failed: true, message: u.error.message };
  }
}

/** "generation 1 of 2, round 2 of 4: 4 candidates on 30 dev items; 121 of 500 calls". */
export function progressText(p: AlignProgress): string {
  const calls = p.budget === null ? `${p.spent} calls` : `${p.spent} of ${p.budget} calls`;
  if (p.generation === 0) return `scoring the start${p.round ? `, ${p.round}` : ""}; ${calls}`;
  return `generation ${p.generation} of ${p.nGenerations}${p.round ? `, ${p.round}` : ""}; ${calls}`;
}

/** "candidate 1 (rewrite of 0): rejected: …". */
export function candidateText(c: CandidateLine): string {
  const from = c.parent === null ? "" : ` of ${c.parent}`;
  return `candidate ${c.id} (${c.kind}${from})${c.rejected ? `: rejected: ${c.rejected}` : ""}`;
}
