#!/usr/bin/env python3
"""Reference values for Judgelab's statistics, from scikit-learn, scipy and krippendorff.

Writes crates/core/src/metrics/testdata/reference.json: fixed inputs (ties, constant raters,
missing judge verdicts, n < 3) and the values the reference libraries give on them. The Rust
tests read that file; they never run Python. Regenerate after changing the cases:

    pip install numpy scipy scikit-learn krippendorff
    python3 tools/reference_stats.py

Bootstrap intervals are computed on the same resamples as the Rust code draws: how many
items of each kind (human label, verdict) a resample takes, drawn by SplitMix64's binomials
(crates/core/src/rng.rs, re-implemented in reference_common.py), then numpy's linear
percentile, with undefined (NaN) resamples left out.
"""

import json
import math
import pathlib
import warnings

import krippendorff
import numpy as np
import scipy
import sklearn
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from reference_common import ci, kind_resamples, num
from reference_ratings import alpha, rating_stats, whole_points

warnings.filterwarnings("ignore")
OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/core/src/metrics/testdata/reference.json"
# --- nominal (pairwise) ---------------------------------------------------------------

CODES = {"A": 0, "B": 1, "tie": 2}


def nominal_stats(human, judge):
    parsed = [(h, j) for h, j in zip(human, judge) if j is not None]
    n = len(human)
    out = {
        "accuracy": num(sum(h == j for h, j in zip(human, judge)) / n) if n else None,
    }
    no_ties = [(h, j) for h, j in zip(human, judge) if h != "tie" and j != "tie"]
    out["agreement_without_ties"] = (
        num(sum(h == j for h, j in no_ties) / len(no_ties)) if no_ties else None
    )
    # A parse failure is a category of its own, which no human label matches: a judge that
    # fails often cannot score well by being right on the few verdicts it gives.
    if human:
        out["cohen_kappa"] = num(cohen_kappa_score(human, ["failed" if j is None else j for j in judge]))
    else:
        out["cohen_kappa"] = None
    out["alpha_nominal"] = alpha(
        [[CODES[h] for h in human], [np.nan if j is None else CODES[j] for j in judge]], "nominal"
    )
    return out


# --- cases ----------------------------------------------------------------------------

rng = np.random.default_rng(20261129)


def noisy_pairwise(n, p_agree, p_missing, with_ties=True):
    labels = ["A", "B", "tie"] if with_ties else ["A", "B"]
    human = list(rng.choice(labels, size=n, p=[0.45, 0.4, 0.15] if with_ties else [0.5, 0.5]))
    judge = []
    for h in human:
        u = rng.random()
        if u < p_missing:
            judge.append(None)
        elif u < p_missing + p_agree:
            judge.append(h)
        else:
            judge.append(str(rng.choice([l for l in labels if l != h])))
    return [str(h) for h in human], judge


def noisy_ratings(n, noise, p_missing, means=True):
    truth = rng.integers(1, 6, size=n)
    if means:
        human = [round(float(np.clip(t + rng.choice([-1, 0, 0, 1]) / 3, 1, 5)), 4) for t in truth]
    else:
        human = [float(t) for t in truth]
    judge = []
    for t in truth:
        if rng.random() < p_missing:
            judge.append(None)
        else:
            judge.append(int(np.clip(t + rng.integers(-noise, noise + 1), 1, 5)))
    return human, judge


nominal_cases = {
    "mixed": noisy_pairwise(40, 0.6, 0.1),
    "no_ties": noisy_pairwise(30, 0.7, 0.0, with_ties=False),
    "perfect": (["A", "B", "tie", "A"], ["A", "B", "tie", "A"]),
    "constant_both": (["A"] * 5, ["A"] * 5),
    "constant_judge": (["A", "B", "B", "A", "tie"], ["A"] * 5),
    "all_missing": (["A", "B"], [None, None]),
    "n1": (["A"], ["B"]),
    "n2": (["A", "B"], ["B", "A"]),
}
rating_cases = {
    "ratings": noisy_ratings(40, 1, 0.1),
    "integer_ties": noisy_ratings(30, 2, 0.0, means=False),
    "constant_judge": ([1.0, 2.0, 3.0, 4.0, 5.0], [3, 3, 3, 3, 3]),
    "constant_both": ([4.0] * 4, [4] * 4),
    "n1": ([2.0], [3]),
    "n2": ([2.0, 4.3333], [3, 5]),
    "missing": ([1.0, 2.6667, 3.0, 4.0, 5.0, 2.0], [None, 3, None, 4, 4, None]),
}

reference = {
    "generated_by": "tools/reference_stats.py",
    "versions": {
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "krippendorff": "0.9.0",
    },
    "nominal": [],
    "ratings": [],
    "bootstrap": [],
    "mcnemar": [],
    "paired": [],
}
for name, (human, judge) in nominal_cases.items():
    reference["nominal"].append({"name": name, "human": human, "judge": judge, **nominal_stats(human, judge)})
for name, (human, judge) in rating_cases.items():
    reference["ratings"].append(
        {"name": name, "human": human, "judge": judge, "lo": 1, "hi": 5, **rating_stats(human, judge, 1, 5)}
    )

# Bootstrap: every statistic of a case on the same 1,000 resamples of its items.
SEED = 7
for name in ["mixed", "no_ties"]:
    human, judge = nominal_cases[name]
    samples = kind_resamples(zip(human, judge), 1000, SEED)
    per = [nominal_stats([human[i] for i in s], [judge[i] for i in s]) for s in samples]
    reference["bootstrap"].append(
        {"kind": "nominal", "case": name, "seed": SEED, "resamples": 1000, "level": 0.95,
         **{k: ci([p[k] for p in per]) for k in per[0]}}
    )
for name in ["ratings", "integer_ties"]:
    human, judge = rating_cases[name]
    samples = kind_resamples(zip(human, judge), 1000, SEED)
    whole = whole_points(human, judge)
    per = [rating_stats([human[i] for i in s], [judge[i] for i in s], 1, 5, whole) for s in samples]
    reference["bootstrap"].append(
        {"kind": "ratings", "case": name, "seed": SEED, "resamples": 1000, "level": 0.95,
         **{k: ci([p[k] for p in per]) for k in per[0]}}
    )

# McNemar's exact test: the two-sided binomial test of the discordant pairs.
for b, c in [(0, 0), (5, 0), (3, 7), (10, 10), (1, 30), (200, 260), (0, 1)]:
    p = 1.0 if b + c == 0 else stats.binomtest(min(b, c), b + c, 0.5).pvalue
    reference["mcnemar"].append({"b": b, "c": c, "p_value": float(p)})

# Paired comparison of two judges on the same items: McNemar on correctness, and a paired
# bootstrap interval of the kappa difference (first minus second).
human, judge_a = noisy_pairwise(50, 0.7, 0.05)
judge_b = [h if rng.random() < 0.5 else str(rng.choice(["A", "B", "tie"])) for h in human]
correct_a = [h == j for h, j in zip(human, judge_a)]
correct_b = [h == j for h, j in zip(human, judge_b)]
b = sum(x and not y for x, y in zip(correct_a, correct_b))
c = sum(y and not x for x, y in zip(correct_a, correct_b))


def kappa_diff(idx):
    ka = nominal_stats([human[i] for i in idx], [judge_a[i] for i in idx])["cohen_kappa"]
    kb = nominal_stats([human[i] for i in idx], [judge_b[i] for i in idx])["cohen_kappa"]
    return None if ka is None or kb is None else ka - kb


reference["paired"].append(
    {
        "human": human, "judge_a": judge_a, "judge_b": judge_b, "seed": SEED, "resamples": 1000,
        "level": 0.95, "b": b, "c": c,
        "p_value": float(stats.binomtest(min(b, c), b + c, 0.5).pvalue) if b + c else 1.0,
        "kappa_diff": kappa_diff(range(len(human))),
        "kappa_diff_ci": ci([kappa_diff(s) for s in kind_resamples(zip(human, judge_a, judge_b), 1000, SEED)]),
    }
)

# Exact verdicts: each verdict is a distribution over labels and "failed". The expected
# accuracy is the mean probability of the human's label; the expected kappa is Cohen's kappa
# of the expected confusion matrix (every (human, outcome) pair weighted by its
# probability, a failure a category of its own); entropy is in bits; for ratings, the G-Eval
# score is the probability-weighted mean of the scale values (renormalised over them),
# correlated with the human ratings.
reference["expected"] = []


def expected_case(human, dists, scale=None):
    hs, js, ws = [], [], []
    for h, d in zip(human, dists):
        for outcome, p in d.items():
            if p > 0:
                hs.append(str(h) if scale is None else str(int(math.floor(h + 0.5))))
                js.append(outcome)
                ws.append(p)
    case = {"human": human, "distributions": dists, "scale": scale}
    case["accuracy"] = float(np.mean([
        d.get(str(h) if scale is None else str(int(math.floor(h + 0.5))), 0.0) for h, d in zip(human, dists)
    ]))
    case["kappa"] = num(cohen_kappa_score(hs, js, sample_weight=ws))
    case["entropy_bits"] = float(np.mean([stats.entropy([p for p in d.values() if p > 0], base=2) for d in dists]))
    case["failed"] = float(np.mean([d.get("failed", 0.0) for d in dists]))
    if scale is not None:
        scores, kept = [], []
        for h, d in zip(human, dists):
            mass = sum(p for k, p in d.items() if k != "failed")
            if mass > 0:
                scores.append(sum(float(k) * p for k, p in d.items() if k != "failed") / mass)
                kept.append(h)
        case["geval_spearman"] = num(stats.spearmanr(kept, scores).statistic)
        case["geval_pearson"] = num(stats.pearsonr(kept, scores).statistic)
    reference["expected"].append(case)


def random_distribution(labels, p_fail):
    w = rng.dirichlet([0.7] * len(labels))
    fail = p_fail * rng.random()
    d = {l: float(x * (1 - fail)) for l, x in zip(labels, w)}
    d["failed"] = float(fail)
    return d


human, _ = noisy_pairwise(40, 0.7, 0.0)
expected_case(human, [random_distribution(["A", "B", "tie"], 0.3) for _ in human])
human, _ = noisy_pairwise(25, 0.7, 0.0, with_ties=False)
expected_case(human, [random_distribution(["A", "B"], 0.0) for _ in human])
ratings = [float(rng.integers(1, 6)) for _ in range(30)]
expected_case(ratings, [random_distribution(["1", "2", "3", "4", "5"], 0.2) for _ in ratings], scale=[1, 5])

OUT.parent.mkdir(parents=True, exist_ok=True)
OUT.write_text(json.dumps(reference, indent=1) + "\n")
print(f"wrote {OUT}")
