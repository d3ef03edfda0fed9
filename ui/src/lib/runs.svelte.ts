/**
 * The runs of this session, kept at module level so that leaving the Runs screen loses
 * nothing: each run's state (updated from its channel), Pause / Resume / Cancel, and the
 * live per-trial metrics polled every two seconds while something runs.
 */
import { Channel } from "@tauri-apps/api/core";
import type { AppError, RunUpdate } from "./bindings";
import { commands, toAppError, unwrap } from "./api";
import {
  applyUpdate,
  isActive,
  liveMetrics,
  newRun,
  restartRun,
  type RunState,
} from "./runstate";

/** How often live metrics are recomputed while a run goes (0 resamples: no intervals). */
const METRICS_EVERY_MS = 2000;

class RunList {
  /** Newest first. */
  runs = $state<RunState[]>([]);

  private generation = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  private polling = new Set<string>();
  /** Refreshes asked for while one was in flight (the last one after a run ends matters). */
  private pending = new Set<string>();

  find(name: string): RunState | undefined {
    return this.runs.find((r) => r.name === name);
  }

  get anyActive(): boolean {
    return this.runs.some(isActive);
  }

  private replace(name: string, change: (run: RunState) => RunState): void {
    const i = this.runs.findIndex((r) => r.name === name);
    if (i >= 0) this.runs[i] = change(this.runs[i]);
  }

  /**
   * Starts (or resumes) the experiment `name` described by `spec`. Returns the error when the
   * engine refuses it (a bad spec, an experiment changed without `replace`, a run already
   * going), leaving the list as it was for a new run.
   */
  async start(name: string, spec: string, replace: boolean): Promise<AppError | null> {
    const generation = ++this.generation;
    const existing = this.find(name);
    const previous = existing ? { ...existing } : null;
    const run = existing ? restartRun(existing, generation) : newRun(name, spec, generation);
    run.spec = spec;
    if (existing) this.replace(name, () => run);
    else this.runs.unshift(run);

    // Updates can arrive before startRun resolves (the thread starts at once), so the
    // channel knows its run by name and generation rather than by the command's answer.
    const channel = new Channel<RunUpdate>((update) => this.onUpdate(name, generation, update));
    try {
      await unwrap(commands.startRun(spec, replace, channel));
    } catch (e) {
      const error = toAppError(e);
      if (previous) this.replace(name, () => ({ ...previous, phase: "failed", error }));
      else this.runs = this.runs.filter((r) => r.name !== name);
      return error;
    }
    this.ensurePolling();
    return null;
  }

  private onUpdate(name: string, generation: number, update: RunUpdate): void {
    const run = this.find(name);
    if (!run || run.generation !== generation) return;
    this.replace(name, (r) => applyUpdate(r, update));
    if (update.event === "finished" || update.event === "failed") {
      // One last refresh shows the final numbers of every trial.
      void this.refreshMetrics(name);
    }
  }

  /** Stops after the calls in flight; every verdict so far is stored. */
  async pause(name: string): Promise<void> {
    await this.stop(name, "pause");
  }

  /** Runs the same spec again without replacing: only what is missing is judged. */
  async resume(name: string): Promise<AppError | null> {
    const run = this.find(name);
    if (!run) return null;
    return this.start(name, run.spec, false);
  }

  /** Stops for good; the verdicts judged so far are kept (a later run resumes from them). */
  async cancel(name: string): Promise<void> {
    const run = this.find(name);
    if (!run) return;
    if (!isActive(run)) {
      this.replace(name, (r) => ({ ...r, phase: "cancelled", stopping: null }));
      return;
    }
    await this.stop(name, "cancel");
  }

  private async stop(name: string, why: "pause" | "cancel"): Promise<void> {
    this.replace(name, (r) => ({ ...r, stopping: why }));
    let stopping = false;
    try {
      stopping = await commands.stopRun(name);
    } catch {
      stopping = false;
    }
    if (!stopping) {
      // Nothing was going (it had just ended, or it was still loading and is gone): say
      // where it stands now instead of waiting for an update that will not come.
      this.replace(name, (r) =>
        isActive(r) ? { ...r, phase: why === "cancel" ? "cancelled" : "paused", stopping: null } : r,
      );
    }
  }

  /** Forgets a run that is over (its verdicts stay in the database). */
  dismiss(name: string): void {
    this.runs = this.runs.filter((r) => r.name !== name || isActive(r));
  }

  private ensurePolling(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => {
      const active = this.runs.filter((r) => r.phase === "running");
      for (const run of active) void this.refreshMetrics(run.name);
      if (!this.anyActive && this.timer !== null) {
        clearInterval(this.timer);
        this.timer = null;
      }
    }, METRICS_EVERY_MS);
  }

  private async refreshMetrics(name: string): Promise<void> {
    // One request per experiment at a time: a slow summary must not pile up calls.
    if (this.polling.has(name)) {
      this.pending.add(name);
      return;
    }
    this.polling.add(name);
    try {
      const results = await unwrap(commands.experimentResults(name, null, 0));
      const metrics = liveMetrics(results);
      this.replace(name, (r) => ({ ...r, metrics }));
    } catch {
      // Before the first verdict there is nothing to summarise; the next tick tries again.
    } finally {
      this.polling.delete(name);
    }
    if (this.pending.delete(name)) void this.refreshMetrics(name);
  }
}

export const runList = new RunList();
