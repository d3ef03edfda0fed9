/**
 * The reading of a paired comparison of two trials, in one sentence a researcher can quote:
 * whether the data tell the two apart, and on what evidence.
 */
import type { Comparison, DriftView } from "./bindings";
import { fmtInterval, fmtNum, fmtPct } from "./format";

/** One sentence on `c`, naming its two trials `first` and `second`. */
export function compareReading(c: Comparison, first: string, second: string): string {
  if (c.n_pairs === 0) return `${first} and ${second} share no judged items: nothing to compare.`;
  const d = c.difference;
  const p = c.mcnemar_p;
  const pText = p === null ? "" : ` (McNemar ${fmtP(p)})`;
  if (d.value === null) {
    return `The ${c.metric} of one of the trials is undefined, so only accuracy can be compared${pText}.`;
  }
  if (d.low !== null && d.high !== null) {
    const ci = fmtInterval(d);
    if (d.low > 0 || d.high < 0) {
      const better = d.low > 0 ? first : second;
      const worse = d.low > 0 ? second : first;
      return `${better} agrees with the humans better than ${worse} on ${c.metric}: the difference ${fmtNum(d.value)} has a 95% interval ${ci} that excludes 0${pText}.`;
    }
    return `The data cannot tell ${first} from ${second} on ${c.metric}: the 95% interval of the difference, ${ci}, includes 0${pText}.`;
  }
  // No interval (0 resamples): fall back on McNemar's test of who is right where they differ.
  if (p !== null && p < 0.05) {
    const better = c.first_only > c.second_only ? first : second;
    return `${better} is right more often where the two differ${pText}; ask for resamples to get an interval on ${c.metric}.`;
  }
  return `No clear difference between ${first} and ${second}${pText}; ask for resamples to get an interval on ${c.metric}.`;
}

/** A p-value as people report it: `p = 0.034`, or `p < 0.001`. */
export function fmtP(p: number): string {
  return p < 0.001 ? "p < 0.001" : `p = ${p.toFixed(3)}`;
}

/** How the verdicts moved from `first` to `second`, in one sentence. */
export function driftReading(d: DriftView, first: string, second: string): string {
  if (d.n_calls === 0) return `${first} and ${second} made no call on the same item, order and repeat.`;
  const rate = d.flip_rate;
  const interval = rate.low !== null && rate.high !== null ? `, 95% interval ${fmtPct(rate.low)}–${fmtPct(rate.high)}` : "";
  const between = d.flips - d.toward_humans - d.away_from_humans;
  const kappa = d.kappa === null ? "" : ` Kappa between the two: ${fmtNum(d.kappa)}.`;
  const left = d.only_first + d.only_second + d.failed_calls;
  const leftOut = left > 0 ? ` ${left} calls only one made, or that failed, are left out.` : "";
  return (
    `${d.flips} of ${d.n_calls} calls flipped from ${first} to ${second} (${fmtPct(rate.value)}${interval}): ` +
    `${d.toward_humans} toward the humans, ${d.away_from_humans} away, ${between} from one wrong verdict to another.${kappa}${leftOut}`
  );
}
