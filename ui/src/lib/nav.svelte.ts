/**
 * Which screen is open, and the selections that travel between screens (the experiment
 * opened from Runs into Results, the metric and resamples Export reuses, the pairs of
 * judges compared in Results that the report adds). Module state, so it outlives the
 * screens that read it.
 */
import type { ComparedPair } from "./bindings";

/** Two judges compared in Results, kept for the report, with the names they were shown by. */
export type ReportPair = { pair: ComparedPair; label: string };

export type Screen = "datasets" | "templates" | "judges" | "builder" | "runs" | "results" | "label" | "export";

export const SCREENS: { id: Screen; title: string }[] = [
  { id: "datasets", title: "Datasets" },
  { id: "templates", title: "Templates" },
  { id: "judges", title: "Judges" },
  { id: "builder", title: "Experiment" },
  { id: "runs", title: "Runs" },
  { id: "results", title: "Results" },
  { id: "label", title: "Label" },
  { id: "export", title: "Export" },
];

export const nav = $state({
  screen: "datasets" as Screen,
  /** The experiment Results and Export show. */
  experiment: "",
  /** The quality metric chosen in Results (`null`: the task's default, kappa). */
  metric: null as string | null,
  resamples: 1000,
  /** Comparisons the report of their first experiment adds, a section each. */
  reportPairs: [] as ReportPair[],
});

/** Keeps `p` for its experiment's report, once. */
export function addReportPair(p: ReportPair): void {
  const same = (q: ComparedPair) => JSON.stringify(q) === JSON.stringify(p.pair);
  if (!nav.reportPairs.some((q) => same(q.pair))) nav.reportPairs.push(p);
}

export function go(screen: Screen): void {
  nav.screen = screen;
}

export function openResults(experiment: string): void {
  // Another experiment may be of another task, whose metrics differ: start from its default.
  if (nav.experiment !== experiment) nav.metric = null;
  nav.experiment = experiment;
  nav.screen = "results";
}
