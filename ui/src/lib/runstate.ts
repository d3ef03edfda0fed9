/**
 * A run as the Runs screen shows it, and how each update streamed from the engine changes
 * it. Pure, so that the states a run can go through are tested without a backend.
 */
import type { AppError, FailureCauseView, Results, RunUpdate } from "./bindings";
import { valueOf } from "./table";

/** The states `run-status` reports in its `data-state` attribute. */
export type RunPhase = "loading" | "running" | "paused" | "finished" | "failed" | "cancelled";

/** One trial's live numbers while its experiment runs (no intervals: 0 resamples). */
export interface LiveMetric {
  id: number;
  label: string;
  n: number;
  kappa: number | null;
  accuracy: number | null;
  parseFailureRate: number | null;
}

export interface RunState {
  name: string;
  /** The experiment file; resuming sends it again. */
  spec: string;
  phase: RunPhase;
  /** The model being loaded, while `phase` is `loading`. */
  model: string | null;
  nTrials: number;
  /** 0-based index of the trial being judged. */
  trialIdx: number;
  done: number;
  total: number;
  /** What `done` and `total` count: verdicts, or calls where a checklist asks a call per
   * criterion of each verdict. */
  unit: "verdicts" | "calls";
  /** Calls of this run (since its last start) without a verdict. */
  nFailed: number;
  verdictsPerSecond: number | null;
  etaSeconds: number | null;
  resumed: boolean;
  /** Set when the run ends. */
  judgedNow: number | null;
  nErrors: number | null;
  modelCalls: number | null;
  promptTokensDecoded: number | null;
  /** Why this run's calls failed, the most frequent cause first; set when the run ends. */
  failures: FailureCauseView[];
  /** Calls timed for latency at a stated load once judging is done: alone (concurrency
   * null, local trials at 1) or with a remote trial's swept concurrency in flight. */
  timed: { done: number; total: number; concurrency: number | null } | null;
  /** Calls this run timed alone; set when the run ends. */
  timedNow: number | null;
  /** Calls this run timed at the sweep's concurrency levels; set when the run ends. */
  timedAtLoad: number | null;
  error: AppError | null;
  /** A race's current round, and the trials still in it. */
  race: { round: number; nRounds: number; nItems: number; survivors: number } | null;
  /** Trials (store ids) the race dropped during this run, clearly worse than its leader. */
  dropped: number[];
  /** Once the dev split is judged: the trials (store ids) that judge the test split. */
  confirming: { trialIds: number[]; nTestItems: number } | null;
  /** The budget that stopped the run (`limits.max_calls = …`); set when it ends. */
  stoppedBy: string | null;
  /** What the run found of a judge and did about it (its one-token trials generate
   * instead of reading exact verdicts, and why; its server serves one request at a time),
   * as the rest of a sentence that begins with the judge's name. */
  notes: { judge: string; message: string }[];
  /** What the user asked for while the calls in flight finish. */
  stopping: "pause" | "cancel" | null;
  metrics: LiveMetric[];
  /** Increases with every (re)start; updates from an older channel are ignored. */
  generation: number;
}

export function newRun(name: string, spec: string, generation: number): RunState {
  return {
    name,
    spec,
    phase: "loading",
    model: null,
    nTrials: 0,
    trialIdx: 0,
    done: 0,
    total: 0,
    unit: "verdicts",
    nFailed: 0,
    verdictsPerSecond: null,
    etaSeconds: null,
    resumed: false,
    judgedNow: null,
    nErrors: null,
    modelCalls: null,
    promptTokensDecoded: null,
    failures: [],
    timed: null,
    timedNow: null,
    timedAtLoad: null,
    error: null,
    race: null,
    dropped: [],
    confirming: null,
    stoppedBy: null,
    stopping: null,
    notes: [],
    metrics: [],
    generation,
  };
}

/** A run restarted (resumed) with the same spec: its progress stays until the engine reports. */
export function restartRun(run: RunState, generation: number): RunState {
  return {
    ...run,
    phase: "loading",
    model: null,
    nFailed: 0,
    verdictsPerSecond: null,
    etaSeconds: null,
    judgedNow: null,
    nErrors: null,
    modelCalls: null,
    promptTokensDecoded: null,
    failures: [],
    timed: null,
    timedNow: null,
    timedAtLoad: null,
    error: null,
    dropped: [],
    stoppedBy: null,
    stopping: null,
    generation,
  };
}

export function isActive(run: RunState): boolean {
  return run.phase === "loading" || run.phase === "running";
}

/** The run after `update`. */
export function applyUpdate(run: RunState, update: RunUpdate): RunState {
  switch (update.event) {
    case "loading":
      return { ...run, phase: "loading", model: update.model };
    case "started":
      return {
        ...run,
        phase: "running",
        resumed: update.resumed,
        nTrials: update.n_trials,
        total: update.total,
        done: update.done,
        unit: update.verdicts === update.total ? "verdicts" : "calls",
        trialIdx: 0,
      };
    case "progress":
      return {
        ...run,
        phase: "running",
        trialIdx: update.trial_idx,
        done: update.done,
        total: update.total,
        nFailed: update.n_failed,
        verdictsPerSecond: update.verdicts_per_second,
        etaSeconds: update.eta_seconds,
      };
    case "timing":
      return {
        ...run,
        phase: "running",
        timed: { done: update.done, total: update.total, concurrency: update.concurrency },
      };
    case "round":
      return {
        ...run,
        phase: "running",
        race: {
          round: update.round,
          nRounds: update.n_rounds,
          nItems: update.n_items,
          survivors: update.survivors,
        },
      };
    case "dropped":
      return {
        ...run,
        dropped: [...run.dropped, ...update.trial_ids],
        race: run.race ? { ...run.race, survivors: update.survivors } : null,
      };
    case "note":
      return { ...run, notes: [...run.notes, { judge: update.judge, message: update.message }] };
    case "selected":
      return {
        ...run,
        race: null,
        confirming: { trialIds: update.trial_ids, nTestItems: update.n_test_items },
      };
    case "finished": {
      // An interrupted run stopped because it was asked to: by Pause, by Cancel, or by the
      // window closing (which counts as a pause: running it again resumes); or a budget
      // stopped it, which is a pause too.
      const phase: RunPhase = !update.interrupted
        ? "finished"
        : run.stopping === "cancel"
          ? "cancelled"
          : "paused";
      return {
        ...run,
        phase,
        judgedNow: update.judged_now,
        nErrors: update.n_errors,
        modelCalls: update.model_calls,
        promptTokensDecoded: update.prompt_tokens_decoded,
        failures: update.failures,
        timed: null,
        timedNow: update.timed_now,
        timedAtLoad: update.timed_at_load,
        stoppedBy: update.stopped_by,
        etaSeconds: null,
        stopping: null,
      };
    }
    case "failed":
      return { ...run, phase: "failed", error: update.error, etaSeconds: null, stopping: null };
  }
}

/** The live metrics of `results` (computed with 0 resamples): its trials' rows of the
 * results table. */
export function liveMetrics(results: Results): LiveMetric[] {
  const table = results.table;
  return table.rows
    .filter((r) => r.kind === "trial" && r.id !== null)
    .map((r) => ({
      id: r.id as number,
      label: r.label,
      n: valueOf(table, r, "n") ?? 0,
      kappa: valueOf(table, r, "kappa"),
      accuracy: valueOf(table, r, "accuracy"),
      parseFailureRate: valueOf(table, r, "parse_failure_rate"),
    }));
}

/** The run's state in a word or two, for its badge (`run-status`). */
export function statusText(run: RunState): string {
  switch (run.phase) {
    case "loading":
      return run.model ? "loading model" : "starting";
    case "running":
      if (run.stopping === "pause") return "pausing…";
      if (run.stopping === "cancel") return "cancelling…";
      return "running";
    default:
      return run.phase;
  }
}

/** One sentence on where the run stands and what the user can do next; empty when the
 * badge and numbers say it all. */
export function statusDetail(run: RunState): string {
  switch (run.phase) {
    case "loading":
      return run.model ? `Loading the model ${run.model}…` : "Starting the run…";
    case "running":
      if (run.stopping) return "Stopping after the calls in flight; every verdict so far is stored.";
      if (run.timed)
        return run.timed.concurrency === null
          ? `Timing calls alone, one request at a time, for latency at concurrency 1: ${run.timed.done} of ${run.timed.total}.`
          : `Timing calls at concurrency ${run.timed.concurrency}, for latency at that load: ${run.timed.done} of ${run.timed.total}.`;
      if (run.race) {
        const dropped = run.dropped.length ? `; ${run.dropped.length} dropped so far, clearly worse than the leader` : "";
        return `Race round ${run.race.round} of ${run.race.nRounds}: ${run.race.survivors} of ${run.nTrials} trials on the first ${run.race.nItems} dev items${dropped}.`;
      }
      if (run.confirming)
        return `Dev split judged: ${run.confirming.trialIds.length} kept trials judge the ${run.confirming.nTestItems} test items, to confirm the pick.`;
      return run.resumed ? "Resumed: only the calls not stored yet are judged." : "";
    case "paused":
      if (run.stoppedBy)
        return `Stopped: ${run.stoppedBy} reached. Every verdict so far is stored; raise the limit and Resume to go on.`;
      return "Paused. Every verdict so far is stored; Resume judges only what is missing.";
    case "finished": {
      const calls =
        run.modelCalls === null || run.modelCalls === 0
          ? ""
          : ` with ${run.modelCalls} model calls (${(run.promptTokensDecoded ?? 0).toLocaleString("en-US")} prompt tokens decoded)`;
      const judged = run.judgedNow === null ? "" : `${run.judgedNow} ${run.unit} judged in this run${calls}`;
      const failed = run.nErrors ? `${run.nErrors} failed and will be retried by the next run` : "";
      const timed = run.timedNow
        ? `${run.timedNow} calls timed alone for latency at concurrency 1`
        : "";
      const atLoad = run.timedAtLoad
        ? `${run.timedAtLoad} calls timed again at the sweep's concurrency levels`
        : "";
      const parts = [judged, failed, timed, atLoad].filter(Boolean);
      return parts.join("; ") + (parts.length ? "." : "");
    }
    case "cancelled":
      return `Cancelled. The ${run.done} ${run.unit} judged so far are kept; running this experiment again judges only what is missing.`;
    case "failed":
      return "";
  }
}
