/**
 * When the Results screen shows a new experiment's point estimates before its intervals.
 *
 * Intervals are drawn by kinds of items (a million verdicts have a dozen kinds), so at the
 * default 1,000 resamples they add a fraction of the point estimates' time: 0.4 s of 2 s
 * on a million verdicts (`cargo xtask bench results`). A view without them first would
 * delay them by its own time, so the screen asks for them at once. The selection-corrected
 * estimate draws every item of every resample, so with many more resamples the intervals
 * take seconds, and the point estimates show first.
 */
export const AT_ONCE = 1000;

/** Whether a view without intervals comes first, for `resamples` resamples. */
export function pointsFirst(resamples: number): boolean {
  return resamples > AT_ONCE;
}
