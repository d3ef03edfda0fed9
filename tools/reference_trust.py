#!/usr/bin/env python3
"""Reference values for Judgelab's trust statistics (crates/core/src/trust).

Writes crates/core/src/trust/testdata/reference.json: fixed (confidence, right) verdicts and
what scikit-learn gives on them (`calibration_curve` with ten uniform bins, and
`brier_score_loss`); the expected calibration error from that curve and its bin counts; the
same on the bootstrap's resamples (drawn as the Rust code draws them); and the threshold
fixed-sequence testing chooses for a target agreement, with scipy's binomial distribution.
The Rust tests read that file; they never run Python. Regenerate after changing the cases:

    pip install numpy scipy scikit-learn
    python3 tools/reference_trust.py
"""

import json
import math
import pathlib

import numpy as np
from scipy import stats
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss

from reference_common import ci, num, resamples

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/core/src/trust/testdata/reference.json"
SEED = 0
RESAMPLES = 200
rng = np.random.default_rng(16)


def bin_counts(confidence, n_bins=10):
    # calibration_curve's own binning (scikit-learn 1.x), for the counts it does not return.
    bins = np.linspace(0.0, 1.0, n_bins + 1)
    ids = np.searchsorted(bins[1:-1], confidence)
    counts = np.bincount(ids, minlength=n_bins)
    return counts[counts != 0]


def ece(right, confidence):
    if len(right) == 0:
        return None
    prob_true, prob_pred = calibration_curve(right, confidence, n_bins=10, strategy="uniform")
    counts = bin_counts(confidence)
    return float(np.sum(counts / len(right) * np.abs(prob_true - prob_pred)))


def brier(right, confidence):
    return float(brier_score_loss(right, confidence)) if len(right) else None


def threshold(right, confidence, agreement, risk, grid=1000):
    """Fixed-sequence testing from 1 down the grid; thresholds accepting fewer verdicts than
    any test could pass (agreement^n > risk) are passed over."""
    untestable = max(1, math.ceil(math.log(risk) / math.log(agreement)))
    chosen = None
    for j in range(grid + 1):
        lam = 1.0 - j / grid
        accepted = confidence >= lam
        n = int(accepted.sum())
        if n < untestable:
            continue
        wrong = int((~right[accepted]).sum())
        if stats.binom.cdf(wrong, n, 1.0 - agreement) > risk:
            break
        chosen = lam
    return chosen


def case(name, right, confidence, agreement=0.9, risk=0.1):
    right = np.asarray(right, dtype=bool)
    confidence = np.asarray(confidence, dtype=float)
    prob_true, prob_pred = calibration_curve(right, confidence, n_bins=10, strategy="uniform")
    samples = resamples(len(right), RESAMPLES, SEED)
    t = threshold(right, confidence, agreement, risk)
    out = {
        "name": name,
        "right": right.tolist(),
        "confidence": confidence.tolist(),
        "prob_true": prob_true.tolist(),
        "prob_pred": prob_pred.tolist(),
        "counts": bin_counts(confidence).tolist(),
        "ece": ece(right, confidence),
        "brier": brier(right, confidence),
        "ece_ci": ci([ece(right[s], confidence[s]) for s in samples]),
        "brier_ci": ci([brier(right[s], confidence[s]) for s in samples]),
        "agreement": agreement,
        "risk": risk,
        "threshold": t,
    }
    if t is not None:
        accepted = confidence >= t
        out["coverage"] = float(accepted.mean())
        out["accepted_agreement"] = num(right[accepted].mean())
    return out


cases = []
# Spread over [0, 1], edges included (0.1 and 0.3 fall in the bin below; 1.0 in the last).
c = np.concatenate([rng.random(56), [0.0, 0.1, 0.3, 1.0]])
cases.append(case("uniform", rng.random(60) < c, c))
# Overconfident: confidence near 1, right far less often.
c = 0.7 + 0.3 * rng.random(80)
cases.append(case("overconfident", rng.random(80) < c**3, c))
# Good enough for a threshold: 300 verdicts, right with probability about their confidence.
c = np.sort(0.5 + 0.5 * rng.random(300) ** 0.3)
cases.append(case("selective", rng.random(300) < c**1.5, c, agreement=0.9, risk=0.1))
# Confidences clustered at a few values (a judge's top logprobs often are).
c = rng.choice([0.5, 0.75, 0.9, 0.99, 0.999], size=120)
cases.append(case("clustered", rng.random(120) < c, c, agreement=0.85, risk=0.2))
# The binomial tail, where the threshold's test reads it.
binomial = [
    {"k": k, "n": n, "p": p, "cdf": float(stats.binom.cdf(k, n, p))}
    for k, n, p in [(0, 22, 0.1), (2, 10, 0.3), (5, 200, 0.1), (30, 300, 0.2), (0, 5000, 0.1), (40, 41, 0.9)]
]

OUT.parent.mkdir(parents=True, exist_ok=True)
OUT.write_text(json.dumps({"calibration": cases, "binomial": binomial}, indent=1) + "\n")
print(f"wrote {OUT}")
