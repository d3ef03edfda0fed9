"""Agreement of a judge's ratings with human labels as scikit-learn, scipy and krippendorff
compute it, for the reference scripts that need it (statistics, rubric criteria): a judge
verdict of None is a parse failure, left out of the correlations and kappas, missing in
Krippendorff's alpha."""

import math

import krippendorff
import numpy as np
from scipy import stats
from sklearn.metrics import cohen_kappa_score, mean_absolute_error

from reference_common import num


def rnd(x):
    # Rust's f64::round: half away from zero (ratings are positive).
    return int(math.floor(x + 0.5))


def alpha(data, level):
    try:
        return num(krippendorff.alpha(reliability_data=np.array(data, dtype=float), level_of_measurement=level))
    except ValueError:
        return None


def whole_points(human, judge):
    """Every label and verdict is a whole point of the scale: exact agreement means something."""
    return all(float(h).is_integer() for h in human) and all(j is None or float(j).is_integer() for j in judge)


def rating_stats(human, judge, lo, hi, whole=None):
    """`whole`: whether accuracy is defined, as decided on the whole set (a bootstrap
    resample decides as its set does); by default, on these values."""
    if whole is None:
        whole = whole_points(human, judge)
    parsed = [(h, j) for h, j in zip(human, judge) if j is not None]
    hr = [h for h, _ in parsed]
    jr = [float(j) for _, j in parsed]
    hc = [min(max(rnd(h), lo), hi) for h in hr]
    jc = [min(max(rnd(j), lo), hi) for j in jr]
    labels = list(range(lo, hi + 1))
    out = {}
    n = len(human)
    # A parse failure is a wrong answer and a miss.
    out["accuracy"] = num(sum(j is not None and h == j for h, j in zip(human, judge)) / n) if whole and n else None
    out["within_half_point"] = (
        num(sum(j is not None and abs(j - h) <= 0.5 + 1e-9 for h, j in zip(human, judge)) / n)
        if not whole and n else None
    )
    if parsed:
        out["qwk"] = num(cohen_kappa_score(hc, jc, labels=labels, weights="quadratic"))
        out["lwk"] = num(cohen_kappa_score(hc, jc, labels=labels, weights="linear"))
    else:
        out["qwk"] = out["lwk"] = None
    if len(parsed) >= 2:
        out["spearman"] = num(stats.spearmanr(hr, jr).statistic)
        out["kendall"] = num(stats.kendalltau(hr, jr).statistic)
        out["pearson"] = num(stats.pearsonr(hr, jr).statistic) if len(set(hr)) > 1 and len(set(jr)) > 1 else None
    else:
        out["spearman"] = out["kendall"] = out["pearson"] = None
    # An error on the parsed verdicts (parse failures have their own rate).
    out["mae"] = num(mean_absolute_error(hr, jr)) if parsed else None
    hround = [min(max(rnd(h), lo), hi) for h in human]
    jnan = [np.nan if j is None else j for j in judge]
    # Ordinal alpha compares categories: both raters' values rounded onto the scale.
    jround = [np.nan if j is None else min(max(rnd(j), lo), hi) for j in judge]
    out["alpha_ordinal"] = alpha([hround, jround], "ordinal")
    out["alpha_interval"] = alpha([human, jnan], "interval")
    return out
