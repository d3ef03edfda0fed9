// An estimate on items without a label: its form and progress, kept apart from the
// component so that Vitest can check them (the datasets it may take, the width typed, and
// what each update says).
import type { DatasetSummary, EstimateUpdate, EstimateView } from "./bindings";

/** The datasets whose items without a label a trial of an experiment on `own` may judge:
 * the experiment's own first, then the others of its task that have such items. */
export function estimateDatasets(datasets: DatasetSummary[], own: string, task: string): DatasetSummary[] {
  const mine = datasets.filter((d) => d.name === own);
  const others = datasets.filter((d) => d.name !== own && d.task === task && d.n_unlabelled > 0);
  return [...mine, ...others];
}

/** The interval width typed, or the error to show: empty asks for no plan. */
export function parseWidth(text: string): { width: number | null; error: string | null } {
  const t = text.trim();
  if (t === "") return { width: null, error: null };
  const w = Number(t);
  if (!(w > 0) || !Number.isFinite(w)) return { width: null, error: `width: ${JSON.stringify(t)} is not a number above 0` };
  return { width: w, error: null };
}

/** Where an estimate stands, folded from its updates. */
export interface EstimateProgress {
  running: boolean;
  loading: string | null;
  done: number;
  total: number;
  nFailed: number;
  estimate: EstimateView | null;
  error: string | null;
}

export const idle: EstimateProgress = {
  running: false,
  loading: null,
  done: 0,
  total: 0,
  nFailed: 0,
  estimate: null,
  error: null,
};

export function started(): EstimateProgress {
  return { ...idle, running: true };
}

export function advance(p: EstimateProgress, u: EstimateUpdate): EstimateProgress {
  switch (u.event) {
    case "loading":
      return { ...p, loading: u.model };
    case "progress":
      return { ...p, loading: null, done: u.done, total: u.total, nFailed: u.n_failed };
    case "finished":
      return { ...p, running: false, loading: null, estimate: u.estimate };
    case "failed":
      return { ...p, running: false, loading: null, error: u.error.message };
  }
}

/** "judging: 12 / 40 verdicts (1 failed)". */
export function progressText(p: EstimateProgress): string {
  if (p.loading !== null) return `loading ${p.loading}…`;
  if (p.total === 0) return "starting…";
  const failed = p.nFailed > 0 ? ` (${p.nFailed} failed)` : "";
  return `judging: ${p.done} / ${p.total} verdicts${failed}`;
}

/** How this call judged the items, in words: "judged 20 verdicts (0 already stored)". */
export function judgedText(e: EstimateView): string {
  const judged =
    e.judged_now === 0
      ? `all ${e.already_done} verdicts were stored already`
      : `judged ${e.judged_now} verdicts (${e.already_done} already stored)`;
  const again = `start it again to judge the rest`;
  if (e.stopped_by) return `${judged}; stopped: ${e.stopped_by} reached, ${again}`;
  if (e.interrupted) return `${judged}; stopped: ${again}`;
  if (e.n_errors > 0) return `${judged}; ${e.n_errors} calls failed (recorded): ${again}`;
  return judged;
}
