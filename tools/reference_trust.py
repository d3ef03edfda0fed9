#!/usr/bin/env python3
"""Reference values for Judgelab's trust statistics (crates/core/src/trust).

Writes crates/core/src/trust/testdata/reference.json: fixed (confidence, right) verdicts and
what scikit-learn gives on them (`calibration_curve` with ten uniform bins, and
`brier_score_loss`); the expected calibration error from that curve and its bin counts; the
same on the bootstrap's resamples (drawn as the Rust code draws them); and the threshold
fixed-sequence testing chooses for a target agreement, with scipy's binomial distribution;
and the estimates on unlabelled data: PPI++ for a mean computed here in numpy from the
paper's formulas (and checked against `ppi_py.ppi_mean_ci` where it is installed), and
Rogan-Gladen's pass rate from `judgy.estimate_success_rate` with its delta-method interval
in numpy. The Rust tests read that file; they never run Python. Regenerate after changing
the cases:

    pip install numpy scipy scikit-learn judgy ppi-python
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



def ppi(y, f, fu, level=0.95):
    """PPI++ for a mean (Angelopoulos et al. 2023), power-tuned as ppi_py tunes it."""
    y, f, fu = (np.asarray(a, dtype=float) for a in (y, f, fu))
    n, big_n = len(y), len(fu)
    cov = np.mean((y - y.mean()) * (f - f.mean()))
    var_f = np.var(np.concatenate([f, fu]), ddof=1)
    lam = float(np.clip(cov / ((1 + n / big_n) * var_f), 0, 1))
    imputed, rectifier = lam * fu, y - lam * f
    value = imputed.mean() + rectifier.mean()
    z = stats.norm.ppf(0.5 + level / 2)
    se = np.sqrt(imputed.var() / big_n + rectifier.var() / n)
    naive_half = z * np.sqrt(fu.var() / big_n)
    out = {
        "y": y.tolist(), "f": f.tolist(), "f_unlabelled": fu.tolist(), "level": level,
        "lambda": lam, "value": float(value), "ci": [float(value - z * se), float(value + z * se)],
        "naive": float(fu.mean()), "naive_ci": [float(fu.mean() - naive_half), float(fu.mean() + naive_half)],
    }
    try:
        from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
    except ImportError:
        return out
    lo, hi = ppi_mean_ci(y, f, fu, alpha=1 - level)
    point = ppi_mean_pointestimate(y, f, fu)
    assert abs(float(np.ravel(point)[0]) - value) < 1e-12, (point, value)
    assert abs(float(np.ravel(lo)[0]) - out["ci"][0]) < 1e-12 and abs(float(np.ravel(hi)[0]) - out["ci"][1]) < 1e-12
    return out


def rogan_gladen(labels, preds, unlabelled, level=0.95):
    """judgy's point estimate; the delta method's interval over TPR, TNR and the observed rate."""
    import judgy

    labels, preds, unlabelled = (np.asarray(a, dtype=bool) for a in (labels, preds, unlabelled))
    theta, _, _ = judgy.estimate_success_rate(labels.astype(int), preds.astype(int), unlabelled.astype(int), bootstrap_iterations=10)
    pos, neg = labels.sum(), (~labels).sum()
    tpr = (labels & preds).sum() / pos
    tnr = (~labels & ~preds).sum() / neg
    d = tpr + tnr - 1
    p = unlabelled.mean()
    raw = (p + tnr - 1) / d
    assert abs(float(np.clip(raw, 0, 1)) - theta) < 1e-12
    var = (p * (1 - p) / len(unlabelled) + raw**2 * tpr * (1 - tpr) / pos + (1 - raw) ** 2 * tnr * (1 - tnr) / neg) / d**2
    half = stats.norm.ppf(0.5 + level / 2) * np.sqrt(var)
    return {
        "labels": labels.tolist(), "preds": preds.tolist(), "unlabelled": unlabelled.tolist(), "level": level,
        "value": float(theta), "ci": [float(np.clip(raw - half, 0, 1)), float(np.clip(raw + half, 0, 1))],
        "tpr": float(tpr), "tnr": float(tnr), "naive": float(p),
    }


estimates = {"ppi": [], "rogan_gladen": []}
# A win rate (1, 0.5, 0) judged by a biased, noisy judge; a rating mean; a judge that knows
# nothing (lambda clipped to 0).
h = rng.choice([1.0, 0.5, 0.0], size=80, p=[0.5, 0.1, 0.4])
j = np.where(rng.random(80) < 0.75, h, rng.choice([1.0, 0.5, 0.0], size=80))
ju = rng.choice([1.0, 0.5, 0.0], size=400, p=[0.55, 0.1, 0.35])
estimates["ppi"].append(ppi(h, j, ju))
r = rng.integers(1, 6, size=60).astype(float)
jr = np.clip(np.round(r + 0.5 + rng.normal(0, 0.8, 60)), 1, 5)
jru = np.clip(np.round(rng.integers(1, 6, size=300) + 0.5 + rng.normal(0, 0.8, 300)), 1, 5)
estimates["ppi"].append(ppi(r, jr, jru, level=0.9))
estimates["ppi"].append(ppi([1, 0, 1, 0, 1, 1], [0, 1, 0, 1, 0, 0], [1, 0, 0, 1, 1]))
# Pass rates: a decent judge, a lenient one, one whose raw estimate falls below 0 (clipped).
for n, big_n, theta, tpr, tnr in [(120, 600, 0.3, 0.85, 0.8), (90, 300, 0.6, 0.95, 0.6), (100, 200, 0.05, 0.7, 0.9)]:
    lab = rng.random(n) < theta
    pred = np.where(lab, rng.random(n) < tpr, rng.random(n) >= tnr)
    un = rng.random(big_n) < theta
    upred = np.where(un, rng.random(big_n) < tpr, rng.random(big_n) >= tnr)
    if n == 100:
        upred = rng.random(big_n) < 0.05
    estimates["rogan_gladen"].append(rogan_gladen(lab, pred, upred))

OUT.parent.mkdir(parents=True, exist_ok=True)
OUT.write_text(json.dumps({"calibration": cases, "binomial": binomial, "estimates": estimates}, indent=1) + "\n")
print(f"wrote {OUT}")
