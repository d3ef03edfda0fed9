#!/usr/bin/env python3
"""Reference values for Judgelab's rubrics: learned criterion weights
(crates/core/src/rubric/weights.rs) and each criterion's agreement with its human labels
(crates/core/src/results/criteria.rs).

Writes crates/core/src/rubric/testdata/reference.json: fixed problems (a matrix of criterion
scores, one row per item, and the labels) and what `scipy.optimize.nnls` gives on them, both
as they are and centred (the weights of a fit with a free intercept), with that intercept.
The cases include weights at zero (a criterion running against the label, one that repeats
another) and an exact fit.

Writes crates/engine/tests/it/testdata/criteria.json: a dataset rated on two criteria (one
labelled with whole numbers, one with means of three annotators), a judge's rubric answer
on each item (some leaving a criterion out or giving one off its scale, one no answer at
all), and each criterion's agreement as scikit-learn, scipy and krippendorff give it.

The Rust tests read those files; they never run Python. Regenerate after changing the cases:

    pip install numpy scipy scikit-learn krippendorff
    python3 tools/reference_rubric.py
"""

import json
import pathlib

import numpy as np
from scipy.optimize import nnls

from reference_common import num
from reference_ratings import rating_stats

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/core/src/rubric/testdata/reference.json"
CRITERIA_OUT = ROOT / "crates/engine/tests/it/testdata/criteria.json"
rng = np.random.default_rng(36)


def case(name, a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    x, _ = nnls(a, b)
    centred = a - a.mean(axis=0)
    w, _ = nnls(centred, b - b.mean())
    intercept = b.mean() - a.mean(axis=0) @ w
    return {
        "name": name,
        "a": [[num(v) for v in row] for row in a],
        "b": [num(v) for v in b],
        "nnls": [num(v) for v in x],
        "weights": [num(v) for v in w],
        "intercept": num(intercept),
    }


def usr_like(n=60):
    # Five criteria on USR's scales (0-1, 1-3, 1-3, 1-3, 0-1) and an overall 1-5 label that
    # leans on three of them, with noise; the fourth runs against it.
    lo = np.array([0, 1, 1, 1, 0])
    hi = np.array([1, 3, 3, 3, 1])
    scores = lo + rng.integers(0, 3, size=(n, 5)) * (hi - lo) / 2
    label = 1 + 0.8 * scores[:, 1] + 0.5 * scores[:, 2] + 1.2 * scores[:, 4] - 0.3 * scores[:, 3]
    label = np.clip(np.round((label + rng.normal(0, 0.4, n)) * 3) / 3, 1, 5)
    return scores, label


def main():
    scores, label = usr_like()
    dup = np.column_stack([scores[:, 1], scores[:, 1] * 2, scores[:, 2]])
    exact = rng.uniform(0, 1, size=(12, 3))
    cases = [
        case("usr_like", scores, label),
        case("a_column_repeated", dup, label),
        case("exact", exact, exact @ np.array([0.5, 0.0, 2.0]) + 1.0),
        case("against", [[1, 0], [2, 1], [3, 1], [4, 3], [5, 2]], [2.0, 1.5, 1.0, 0.2, 0.4]),
    ]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"cases": cases}, indent=1) + "\n")
    CRITERIA_OUT.parent.mkdir(parents=True, exist_ok=True)
    CRITERIA_OUT.write_text(json.dumps(criteria_case(), indent=1) + "\n")


def criteria_case(n=24):
    scales = {"coherence": [1, 3], "engaging": [1, 3]}
    items = []
    answers = {"coherence": [], "engaging": []}
    for i in range(n):
        coherence = int(rng.integers(1, 4))
        engaging = round(float(np.mean(rng.integers(1, 4, size=3))), 4)
        overall = int(np.clip(round(coherence + engaging - 1 + rng.normal(0, 0.5)), 1, 5))
        said = {
            "coherence": int(np.clip(coherence + rng.integers(-1, 2) * (rng.random() < 0.4), 1, 3)),
            "engaging": int(np.clip(round(engaging) + rng.integers(-1, 2) * (rng.random() < 0.5), 1, 3)),
        }
        if i in (3, 11):
            del said["engaging"]  # left out: that criterion's failure alone
        if i == 7:
            said["engaging"] = 7  # off the scale
        output = json.dumps(said) if i != 15 else "I cannot rate this response."
        for name in answers:
            value = said.get(name) if i != 15 else None
            answers[name].append(value if value is not None and value <= 3 else None)
        items.append({
            "id": f"u{i:02}",
            "overall": overall,
            "labels": {"coherence": coherence, "engaging": engaging},
            "output": output,
        })
    expected = {}
    for name, (lo, hi) in scales.items():
        human = [float(item["labels"][name]) for item in items]
        judge = answers[name]
        failed = sum(j is None for j in judge)
        expected[name] = {
            "n": n,  # every call answered: a parse failure is an answer, not a failed call
            "n_errors": 0,
            "parse_failure_rate": failed / n,
            **rating_stats(human, judge, lo, hi),
        }
    # Criterion weights fitted to the overall label on the verdicts with both values, and the
    # weighted aggregate (kept on 1-5) scored against it; the others fail as their answer did.
    complete = [i for i in range(n) if all(answers[c][i] is not None for c in scales)]
    x = np.array([[answers[c][i] for c in scales] for i in complete], dtype=float)
    y = np.array([items[i]["overall"] for i in complete], dtype=float)
    w, _ = nnls(x - x.mean(axis=0), y - y.mean())
    intercept = float(y.mean() - w @ x.mean(axis=0))
    predicted = [None] * n
    for row, i in zip(x, complete):
        predicted[i] = float(np.clip(intercept + w @ row, 1, 5))
    overall = [float(item["overall"]) for item in items]
    varies = {}
    for j, c in enumerate(scales):
        _, counts = np.unique(x[:, j], return_counts=True)
        varies[c] = float((len(x) - counts.max()) / len(x))
    # The minimum aggregate: each verdict's lowest criterion as a share of its scale, on 1-5.
    minimum = [None] * n
    for i in complete:
        share = min((answers[c][i] - lo) / (hi - lo) for c, (lo, hi) in scales.items())
        minimum[i] = 1 + share * 4
    weights = {
        "weights": dict(zip(scales, map(float, w))),
        "intercept": intercept,
        "n_fit": len(complete),
        "varies": varies,
        **rating_stats(overall, predicted, 1, 5),
        "minimum": rating_stats(overall, minimum, 1, 5),
    }
    return {"scales": scales, "items": items, "expected": expected, "weights": weights}


if __name__ == "__main__":
    main()
