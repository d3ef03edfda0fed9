// A load ramp's form and progress, kept apart from the component so that Vitest can check
// them: the levels a user types, and what each update from the ramp says.
import type { LoadUpdate } from "./bindings";

/** "1, 2, 4, 8" as levels of requests in flight, or the error to show. */
export function parseLevels(text: string): { levels: number[]; error: string | null } {
  const parts = text.split(/[\s,]+/).filter((p) => p !== "");
  if (parts.length === 0) return { levels: [], error: "levels: give one or more, e.g. 1, 2, 4, 8" };
  const levels: number[] = [];
  for (const p of parts) {
    const n = Number(p);
    if (!Number.isInteger(n) || n < 1 || n > 256) {
      return { levels: [], error: `levels: ${JSON.stringify(p)} is not a whole number from 1 to 256` };
    }
    if (!levels.includes(n)) levels.push(n);
  }
  return { levels: levels.sort((a, b) => a - b), error: null };
}

/** Where a ramp stands, folded from its updates. */
export interface LoadProgress {
  running: boolean;
  concurrency: number | null;
  levelIdx: number;
  nLevels: number;
  done: number;
  requests: number;
  /** Done when finished: the knee and why; or the error. */
  message: string | null;
  failed: boolean;
}

export const idle: LoadProgress = {
  running: false,
  concurrency: null,
  levelIdx: 0,
  nLevels: 0,
  done: 0,
  requests: 0,
  message: null,
  failed: false,
};

export function started(): LoadProgress {
  return { ...idle, running: true };
}

export function advance(p: LoadProgress, u: LoadUpdate): LoadProgress {
  switch (u.event) {
    case "level":
      return { ...p, concurrency: u.concurrency, levelIdx: u.level_idx, nLevels: u.n_levels, done: 0, requests: u.requests };
    case "request":
      return { ...p, concurrency: u.concurrency, done: u.done };
    case "finished":
      return {
        ...p,
        running: false,
        done: p.requests,
        message: `Ramp finished: ${u.knee === null ? "no knee" : `knee at ${u.knee}`}.`,
      };
    case "failed":
      return { ...p, running: false, failed: true, message: u.error.message };
  }
}

/** "level 2 of 4 (4 in flight): 12 / 24 requests". */
export function progressText(p: LoadProgress): string {
  if (p.concurrency === null) return "warming up…";
  return `level ${p.levelIdx + 1} of ${p.nLevels} (${p.concurrency} in flight): ${p.done} / ${p.requests} requests`;
}
