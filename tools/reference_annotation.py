#!/usr/bin/env python3
"""Reference values for Judgelab's labelling queue (crates/core/src/annotation).

Writes crates/core/src/annotation/testdata/reference.json: a dataset's labels and two
annotators' (each labelling part of the items), on pairwise items and on 1-5 ratings whose
dataset labels are means of three annotators; and what scikit-learn, scipy and
krippendorff give on them: each pair of raters on the items both labelled (accuracy,
Cohen's kappa, quadratic-weighted for ratings, Spearman and Pearson for ratings), alpha
over all three raters (nominal; interval for ratings), the annotators' labels combined
(majority, a split vote a tie; the mean), and the vote entropy of fixed vote lists; and
ratings that are means of three people whose own labels the file keeps
(`meta.annotations`), beside an annotator of the queue. The
Rust tests read that file; they never run Python. Regenerate after changing the cases:

    pip install numpy scipy scikit-learn krippendorff
    python3 tools/reference_annotation.py
"""

import json
import math
import pathlib

import krippendorff
import numpy as np
from scipy import stats
from sklearn.metrics import accuracy_score, cohen_kappa_score

from reference_common import num
from reference_ratings import whole_points

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/core/src/annotation/testdata/reference.json"
N = 40
CHOICES = ["A", "B", "tie"]
CODES = {"A": 0, "B": 1, "tie": 2}


def rounded(x):
    """Rust's f64::round (halves away from zero), as the metrics read a rating."""
    return int(math.floor(x + 0.5))


def noisy_choice(rng, label, p_same):
    return label if rng.random() < p_same else CHOICES[int(rng.integers(0, 3))]


def pairs_of(raters, score):
    out = []
    names = list(raters)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            shared = sorted(set(raters[a]) & set(raters[b]))
            if not shared:
                continue
            x = [raters[a][k] for k in shared]
            y = [raters[b][k] for k in shared]
            out.append({"first": a, "second": b, "n_items": len(shared), **score(x, y)})
    return out


def alpha_over(raters, value, level):
    ids = sorted({k for r in raters.values() for k in r})
    data = [[value(r[k]) if k in r else np.nan for k in ids] for r in raters.values()]
    shared = sum(1 for k in ids if sum(k in r for r in raters.values()) >= 2)
    return num(krippendorff.alpha(reliability_data=np.array(data, dtype=float), level_of_measurement=level)), shared


def pairwise_case(rng):
    ids = [f"p{i:02}" for i in range(N)]
    dataset = {k: CHOICES[int(rng.choice(3, p=[0.45, 0.45, 0.1]))] for k in ids}
    ann = {k: noisy_choice(rng, dataset[k], 0.75) for k in ids[:28]}
    bob = {k: noisy_choice(rng, dataset[k], 0.6) for k in ids[12:]}
    raters = {"dataset": dataset, "ann": ann, "bob": bob}

    def score(x, y):
        return {
            "accuracy": num(accuracy_score(x, y)),
            "kappa": num(cohen_kappa_score(x, y)),
        }

    alpha, shared = alpha_over(raters, lambda l: CODES[l], "nominal")
    combined = {}
    for k in ids:
        given = [r[k] for name, r in raters.items() if name != "dataset" and k in r]
        if not given:
            continue
        counts = {c: given.count(c) for c in set(given)}
        top = max(counts.values())
        leaders = [c for c in counts if counts[c] == top]
        combined[k] = leaders[0] if len(leaders) == 1 else "tie"
    return {
        "raters": raters,
        "pairs": pairs_of(raters, score),
        "alpha": alpha,
        "n_shared": shared,
        "combined": combined,
    }


def rating_score(x, y):
    scale = list(range(1, 6))
    xc = [min(5, max(1, rounded(v))) for v in x]
    yc = [min(5, max(1, rounded(v))) for v in y]
    # Exact agreement where every rating is a whole point, else within half a point.
    whole = whole_points(x, y)
    return {
        "accuracy": num(np.mean([float(a == b) for a, b in zip(xc, yc)])) if whole else None,
        "within_half_point": None if whole else num(np.mean([float(abs(a - b) <= 0.5 + 1e-9) for a, b in zip(x, y)])),
        "kappa": num(cohen_kappa_score(xc, yc, weights="quadratic", labels=scale)),
        "spearman": num(stats.spearmanr(x, y).statistic),
        "pearson": num(stats.pearsonr(x, y).statistic),
    }


def file_case(rng):
    """Ratings whose dataset labels are the means of three people the file keeps
    (meta.annotations; the third rated the first 30 items only), and one annotator of the
    queue. The dataset's label is those people's combined: it is not paired with them, and
    alpha runs over the people alone."""
    ids = [f"f{i:02}" for i in range(N)]
    truth = {k: int(rng.integers(1, 6)) for k in ids}
    people = {}
    for name, spread, items in [("r1", 1, ids), ("r2", 1, ids), ("r3", 2, ids[:30])]:
        people[name] = {k: min(5, max(1, truth[k] + int(rng.integers(-spread, spread + 1)))) for k in items}
    dataset = {k: round(float(np.mean([p[k] for p in people.values() if k in p])), 4) for k in ids}
    ann = {k: min(5, max(1, truth[k] + int(rng.integers(-1, 2)))) for k in ids[:20]}
    raters = {"dataset": dataset, "ann": ann}
    raters.update({f"{name} (file)": labels for name, labels in people.items()})
    pairs = [
        p for p in pairs_of(raters, rating_score)
        if not (p["first"] == "dataset" and p["second"].endswith(" (file)"))
    ]
    alpha, shared = alpha_over({n: r for n, r in raters.items() if n != "dataset"}, float, "interval")
    return {
        "raters": raters,
        "pairs": pairs,
        "alpha": alpha,
        "n_shared": shared,
        "combined": {k: float(v) for k, v in ann.items()},
    }


def rating_case(rng):
    ids = [f"r{i:02}" for i in range(N)]
    truth = {k: int(rng.integers(1, 6)) for k in ids}
    # The dataset's labels are means of three annotators, as rating datasets often carry.
    dataset = {
        k: round(float(np.mean([min(5, max(1, t + int(rng.integers(-1, 2)))) for _ in range(3)])), 4)
        for k, t in truth.items()
    }
    ann = {k: min(5, max(1, truth[k] + int(rng.integers(-1, 2)))) for k in ids[:30]}
    bob = {k: min(5, max(1, truth[k] + int(rng.integers(-2, 3)))) for k in ids[8:]}
    raters = {"dataset": dataset, "ann": ann, "bob": bob}
    score = rating_score
    alpha, shared = alpha_over(raters, float, "interval")
    combined = {}
    for k in ids:
        given = [r[k] for name, r in raters.items() if name != "dataset" and k in r]
        if given:
            combined[k] = float(np.mean(given))
    return {
        "raters": raters,
        "pairs": pairs_of(raters, score),
        "alpha": alpha,
        "n_shared": shared,
        "combined": combined,
    }


def entropies():
    cases = [["A"], ["A", "A"], ["A", "B"], ["A", "B", "tie"], ["A", "A", "B", "tie", "tie", "B", "A"]]
    out = []
    for votes in cases:
        counts = [votes.count(c) for c in CHOICES if c in votes]
        out.append({"votes": votes, "entropy": num(stats.entropy(counts, base=2)) if len(votes) >= 2 else None})
    for votes in [[1, 5], [3, 3, 4], [1, 2, 3, 4, 5]]:
        out.append({"votes": votes, "spread": num(np.std(votes))})
    return out


def main():
    rng = np.random.default_rng(23)
    reference = {
        "pairwise": pairwise_case(rng),
        "single": rating_case(rng),
        "disagreement": entropies(),
        "file": file_case(rng),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(reference, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
