#!/usr/bin/env python3
"""Reference values for verdict drift between two judges (crates/core/src/metrics/drift.rs),
from statsmodels, scikit-learn and scipy.

Writes crates/core/src/metrics/testdata/drift.json: two judges' verdicts on fixed calls
(items judged in both answer orders, parse failures included) with the flip matrix, flips
toward and away from the humans, the flip rate with its bootstrap interval over items,
Cohen's kappa between the judges (scikit-learn, a failure a category of its own),
McNemar's exact test on correctness (statsmodels), and KL and Jensen–Shannon divergences
of fixed belief pairs (scipy). The Rust tests read that file; they never run Python.

    pip install numpy scipy scikit-learn statsmodels
    python3 tools/reference_drift.py
"""

import json
import math
import pathlib

import numpy as np
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.contingency_tables import mcnemar

from reference_common import ci, resamples

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/core/src/metrics/testdata/drift.json"
SEED = 11
rng = np.random.default_rng(20261205)
LABELS = ["A", "B", "tie"]
ORDER = ["A", "B", "tie", "failed"]


def judge_from(human, p_agree, p_fail):
    u = rng.random()
    if u < p_fail:
        return "failed"
    if u < p_fail + p_agree:
        return human
    return str(rng.choice([l for l in LABELS if l != human]))


def belief_near(verdict):
    """A belief over A, B, tie and a failure whose most likely outcome is `verdict`."""
    w = rng.dirichlet([1.0, 1.0, 1.0, 0.3])
    w[ORDER.index(verdict)] += 1.5
    return [float(x) for x in w / w.sum()]


# Forty items, each judged in both answer orders: the first judge agrees with the humans
# 70% of the time, the second is the first with some verdicts flipped.
n_items = 40
calls = []
for i in range(n_items):
    human = str(rng.choice(LABELS, p=[0.45, 0.4, 0.15]))
    for swapped in [False, True]:
        a = judge_from(human, 0.7, 0.05)
        b = a if rng.random() < 0.75 else judge_from(human, 0.6, 0.08)
        calls.append({"item": f"i{i:02}", "swapped": swapped, "human": human, "first": a,
                      "second": b, "first_belief": belief_near(a), "second_belief": belief_near(b)})

categories = [c for c in ORDER if any(c in (x["human"], x["first"], x["second"]) for x in calls)]
matrix = [[sum(1 for x in calls if x["first"] == r and x["second"] == c) for c in categories]
          for r in categories]
flips = sum(x["first"] != x["second"] for x in calls)
toward = sum(x["first"] != x["human"] and x["second"] == x["human"] for x in calls)
away = sum(x["first"] == x["human"] and x["second"] != x["human"] for x in calls)
by_human = []
for h in [l for l in LABELS if any(x["human"] == l for x in calls)]:
    sub = [x for x in calls if x["human"] == h]
    by_human.append({
        "human": h, "n_pairs": len(sub), "flips": sum(x["first"] != x["second"] for x in sub),
        "toward_humans": sum(x["first"] != h and x["second"] == h for x in sub),
        "away_from_humans": sum(x["first"] == h and x["second"] != h for x in sub),
        "matrix": [[sum(1 for x in sub if x["first"] == r and x["second"] == c)
                    for c in categories] for r in categories],
    })

items = sorted({x["item"] for x in calls})
per_item = [(sum(x["first"] != x["second"] for x in calls if x["item"] == it),
             sum(1 for x in calls if x["item"] == it)) for it in items]


def flip_rate(idx):
    f = sum(per_item[i][0] for i in idx)
    n = sum(per_item[i][1] for i in idx)
    return f / n if n else None


right_a = [x["first"] == x["human"] for x in calls]
right_b = [x["second"] == x["human"] for x in calls]
table = [[sum(a and b for a, b in zip(right_a, right_b)), sum(a and not b for a, b in zip(right_a, right_b))],
         [sum(b and not a for a, b in zip(right_a, right_b)), sum(not a and not b for a, b in zip(right_a, right_b))]]

kls = [float(entropy(x["first_belief"], x["second_belief"])) for x in calls]
jss = [float(jensenshannon(x["first_belief"], x["second_belief"]) ** 2) for x in calls]
item_kl = [(sum(k for x, k in zip(calls, kls) if x["item"] == it),
            sum(1 for x in calls if x["item"] == it)) for it in items]


def kl_mean(idx):
    total = sum(item_kl[i][0] for i in idx)
    n = sum(item_kl[i][1] for i in idx)
    return total / n if n else None


case = {
    "calls": calls, "seed": SEED, "resamples": 1000, "level": 0.95,
    "categories": categories, "matrix": matrix, "by_human": by_human,
    "n_pairs": len(calls), "n_items": len(items), "flips": flips,
    "toward_humans": toward, "away_from_humans": away,
    "flip_rate": flip_rate(range(len(items))),
    "flip_rate_ci": ci([flip_rate(s) for s in resamples(len(items), 1000, SEED)]),
    "kappa": float(cohen_kappa_score([x["first"] for x in calls], [x["second"] for x in calls])),
    "mcnemar_b": table[0][1], "mcnemar_c": table[1][0],
    "mcnemar_p": float(mcnemar(table, exact=True).pvalue),
    "kl_mean": float(np.mean(kls)),
    "kl_mean_ci": ci([kl_mean(s) for s in resamples(len(items), 1000, SEED)]), "kl_p95": float(np.percentile(kls, 95)),
    "js_mean": float(np.mean(jss)), "js_p95": float(np.percentile(jss, 95)),
}

# Divergences of fixed pairs, zeros included (KL is infinite where q rules out what p allows).
pairs = [
    ([0.7, 0.2, 0.1], [0.6, 0.3, 0.1]),
    ([0.98, 0.01, 0.01], [0.01, 0.98, 0.01]),
    ([0.5, 0.5, 0.0], [0.25, 0.25, 0.5]),
    ([0.25, 0.25, 0.5], [0.5, 0.5, 0.0]),
    ([1.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
    ([0.2, 0.3, 0.5], [0.2, 0.3, 0.5]),
    ([1.0, 0.0], [0.0, 1.0]),
]
divergences = []
for p, q in pairs:
    k = float(entropy(p, q))
    divergences.append({"p": p, "q": q, "kl": None if math.isinf(k) else k,
                        "js": float(jensenshannon(p, q) ** 2)})

# McNemar's exact test on 2x2 tables of correctness (first right/wrong x second right/wrong).
tables = [[[10, 0], [0, 5]], [[20, 5], [0, 3]], [[12, 3], [7, 9]], [[40, 10], [10, 2]],
          [[5, 1], [30, 4]], [[100, 200], [260, 50]]]
mcnemars = [{"b": t[0][1], "c": t[1][0], "p_value": float(mcnemar(t, exact=True).pvalue)}
            for t in tables]

OUT.write_text(json.dumps({"case": case, "divergences": divergences, "mcnemar": mcnemars},
                          indent=1) + "\n")
print(f"wrote {OUT}")
