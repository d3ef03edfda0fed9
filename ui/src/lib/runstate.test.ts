/** The states a run goes through as its updates arrive. */
import { describe, expect, it } from "vitest";
import type { Results, RunUpdate } from "./bindings";
import { applyUpdate, isActive, liveMetrics, newRun, restartRun, statusDetail, statusText, type RunState } from "./runstate";

function play(run: RunState, ...updates: Parameters<typeof applyUpdate>[1][]): RunState {
  return updates.reduce(applyUpdate, run);
}

describe("run state", () => {
  const start = newRun("exp", "name = \"exp\"", 1);

  it("goes from loading to running to finished", () => {
    expect(start.phase).toBe("loading");
    const loading = applyUpdate(start, { event: "loading", model: "default" });
    expect(statusText(loading)).toBe("loading model");
    expect(statusDetail(loading)).toBe("Loading the model default…");
    const running = play(
      loading,
      { event: "started", experiment: "exp", resumed: false, n_trials: 4, total: 80, done: 0, verdicts: 80 },
      { event: "progress", trial_idx: 1, done: 30, total: 80, n_failed: 2, verdicts_per_second: 3.5, eta_seconds: 14.3 },
    );
    expect(running).toMatchObject({ phase: "running", nTrials: 4, trialIdx: 1, done: 30, total: 80, nFailed: 2 });
    expect(isActive(running)).toBe(true);
    const finished = applyUpdate(running, { event: "finished", interrupted: false, stopped_by: null, judged_now: 80, n_errors: 0, model_calls: 8, prompt_tokens_decoded: 5120, timed_now: 0, timed_at_load: 0, failures: [] });
    expect(finished.phase).toBe("finished");
    expect(statusText(finished)).toBe("finished");
    expect(statusDetail(finished)).toBe("80 verdicts judged in this run with 8 model calls (5,120 prompt tokens decoded).");
    expect(statusDetail({ ...finished, nErrors: 2, modelCalls: null })).toBe("80 verdicts judged in this run; 2 failed and will be retried by the next run.");
    expect(isActive(finished)).toBe(false);
  });

  it("keeps what the run found of its judges", () => {
    const message = "generates its one-token verdicts, one call per trial, instead of reading them exact: no logprobs";
    const run = applyUpdate(start, { event: "note", judge: "api", message });
    expect(run.notes).toEqual([{ judge: "api", message }]);
    expect(restartRun(run, 2).notes).toEqual([{ judge: "api", message }]);
  });

  it("counts a checklist's calls as calls, not verdicts", () => {
    const running = applyUpdate(start, { event: "started", experiment: "exp", resumed: false, n_trials: 1, total: 50, done: 0, verdicts: 10 });
    expect(running.unit).toBe("calls");
    const finished = applyUpdate(running, { event: "finished", interrupted: false, stopped_by: null, judged_now: 50, n_errors: 0, model_calls: 50, prompt_tokens_decoded: 900, timed_now: 0, timed_at_load: 0, failures: [] });
    expect(statusDetail(finished)).toBe("50 calls judged in this run with 50 model calls (900 prompt tokens decoded).");
  });

  it("says when it times calls alone, and how many it timed", () => {
    const running = applyUpdate(start, { event: "started", experiment: "exp", resumed: false, n_trials: 4, total: 80, done: 80, verdicts: 80 });
    const timing = applyUpdate(running, { event: "timing", done: 5, total: 80, concurrency: null });
    expect(isActive(timing)).toBe(true);
    expect(statusDetail(timing)).toBe("Timing calls alone, one request at a time, for latency at concurrency 1: 5 of 80.");
    const finished = applyUpdate(timing, { event: "finished", interrupted: false, stopped_by: null, judged_now: 0, n_errors: 0, model_calls: 0, prompt_tokens_decoded: 0, timed_now: 80, timed_at_load: 0, failures: [] });
    expect(finished.timed).toBeNull();
    expect(statusDetail(finished)).toBe("0 verdicts judged in this run; 80 calls timed alone for latency at concurrency 1.");
    const atLoad = applyUpdate(running, { event: "timing", done: 3, total: 40, concurrency: 4 });
    expect(statusDetail(atLoad)).toBe("Timing calls at concurrency 4, for latency at that load: 3 of 40.");
    const done = applyUpdate(atLoad, { event: "finished", interrupted: false, stopped_by: null, judged_now: 0, n_errors: 0, model_calls: 0, prompt_tokens_decoded: 0, timed_now: 0, timed_at_load: 40, failures: [] });
    expect(statusDetail(done)).toBe("0 verdicts judged in this run; 40 calls timed again at the sweep's concurrency levels.");
  });

  it("tells a pause from a cancel by what was asked", () => {
    const running = applyUpdate(start, { event: "started", experiment: "exp", resumed: false, n_trials: 1, total: 10, done: 3, verdicts: 10 });
    const stop: RunUpdate = { event: "finished", interrupted: true, stopped_by: null, judged_now: 3, n_errors: 0, model_calls: 3, prompt_tokens_decoded: 900, timed_now: 0, timed_at_load: 0, failures: [] };
    expect(applyUpdate({ ...running, stopping: "pause" }, stop).phase).toBe("paused");
    expect(applyUpdate({ ...running, stopping: null }, stop).phase).toBe("paused");
    const cancelled = applyUpdate({ ...running, stopping: "cancel" }, stop);
    expect(cancelled.phase).toBe("cancelled");
    expect(statusText(cancelled)).toBe("cancelled");
    expect(statusDetail(cancelled)).toBe(
      "Cancelled. The 3 verdicts judged so far are kept; running this experiment again judges only what is missing.",
    );
    expect(statusText({ ...running, stopping: "pause" })).toBe("pausing…");
  });

  it("keeps why calls failed, and forgets it when the run restarts", () => {
    const running = applyUpdate(start, { event: "started", experiment: "exp", resumed: false, n_trials: 1, total: 20, done: 0, verdicts: 20 });
    const failures = [{ error: "HTTP 401 Unauthorized; check the API key ($BAR_KEY)", n_calls: 20 }];
    const finished = applyUpdate(running, { event: "finished", interrupted: false, stopped_by: null, judged_now: 20, n_errors: 20, model_calls: 20, prompt_tokens_decoded: 0, timed_now: 0, timed_at_load: 0, failures });
    expect(finished.failures).toEqual(failures);
    expect(statusDetail(finished)).toContain("20 failed and will be retried by the next run");
    expect(restartRun(finished, 3).failures).toEqual([]);
  });

  it("keeps the error of a failed run", () => {
    const error = { code: "model_missing" as const, message: "no model", details: [] };
    const failed = applyUpdate(start, { event: "failed", error });
    expect(failed.phase).toBe("failed");
    expect(statusText(failed)).toBe("failed");
    expect(failed.error).toEqual(error);
  });

  it("keeps progress across a resume until the engine reports", () => {
    const paused = { ...start, phase: "paused" as const, done: 5, total: 10, nFailed: 1 };
    const resumed = restartRun(paused, 2);
    expect(resumed).toMatchObject({ phase: "loading", done: 5, total: 10, nFailed: 0, generation: 2 });
  });

  it("reads live metrics from the results table by column key", () => {
    const cell = (value: number | null) => ({ text: String(value), interval: "", value, low: null, high: null });
    const column = (key: string, unit: string) => ({ key, title: key, unit, shown: true });
    const results = {
      table: {
        ranking: "",
        columns: [column("n", "count"), column("accuracy", "estimate"), column("kappa", "estimate"), column("parse_failure_rate", "share")],
        rows: [
          { kind: "trial", id: 7, name: "#7", label: "#7 temp=0", description: null, best: true, recommended: true, cells: [cell(20), cell(0.55), cell(0.18), cell(0.1)] },
          { kind: "panel", id: null, name: "vote", label: "vote panel", description: null, best: false, recommended: false, cells: [cell(20), cell(0.5), cell(0.1), cell(0)] },
        ],
        baselines: [],
      },
    } as unknown as Results;
    expect(liveMetrics(results)).toEqual([
      { id: 7, label: "#7 temp=0", n: 20, kappa: 0.18, accuracy: 0.55, parseFailureRate: 0.1 },
    ]);
  });
});
