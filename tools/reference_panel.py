#!/usr/bin/env python3
"""Reference values for Judgelab's panels (crates/core/src/panel).

Writes crates/core/src/panel/testdata/reference.json: three members' fixed verdicts on
pairwise and on 1-5 rating items (None: a parse failure), the panel's verdicts voted here
by hand (majority with a split vote as a tie or as the first member's; the mean of the
scores), and what scikit-learn, scipy and krippendorff give on them: the panel's accuracy,
Cohen's kappa (quadratic-weighted for ratings), Spearman, the members' Krippendorff alpha,
the panel's kappa without each member, and the accuracy's bootstrap interval on the
resamples the Rust code draws. The Rust tests read that file; they never run Python.
Regenerate after changing the cases:

    pip install numpy scipy scikit-learn krippendorff
    python3 tools/reference_panel.py
"""

import json
import math
import pathlib

import krippendorff
import numpy as np
from scipy import stats
from sklearn.metrics import accuracy_score, cohen_kappa_score

from reference_common import ci, kind_resamples, num
from reference_ratings import whole_points

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/core/src/panel/testdata/reference.json"
RESAMPLES = 200
FAILED = "failed"


def majority(votes, ties, pairwise):
    """The label most votes are; a split as `ties` says; None where every vote failed."""
    given = [v for v in votes if v is not None]
    if not given:
        return None
    counts = {}
    for v in given:
        counts[v] = counts.get(v, 0) + 1
    top = max(counts.values())
    leaders = [v for v in counts if counts[v] == top]  # in the order first given
    if len(leaders) == 1:
        return leaders[0]
    if ties == "tie" and pairwise:
        return "tie"
    return leaders[0]


def mean(votes):
    given = [v for v in votes if v is not None]
    return sum(given) / len(given) if given else None


def rounded(x):
    """Rust's f64::round (halves away from zero), as the metrics read a rating."""
    return int(math.floor(x + 0.5))


def pairwise_case(rng):
    n = 36
    humans = list(rng.choice(["A", "B", "tie"], size=n, p=[0.45, 0.45, 0.10]))
    members = []
    for skill in (0.75, 0.6, 0.5):
        verdicts = []
        for h in humans:
            r = rng.random()
            if r < 0.06:
                verdicts.append(None)
            elif r < 0.06 + skill:
                verdicts.append(h)
            else:
                verdicts.append(str(rng.choice(["A", "B", "tie"])))
        members.append(verdicts)
    # Item 0: every member fails to parse; item 1: a three-way split.
    for m in members:
        m[0] = None
    members[0][1], members[1][1], members[2][1] = "A", "B", "tie"
    out = {"humans": humans, "members": members}
    codes = {"A": 0, "B": 1, "tie": 2}
    data = np.array([[np.nan if v is None else codes[v] for v in m] for m in members])
    out["members_alpha"] = num(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    for ties in ("tie", "first"):
        votes = lambda ms: [majority([m[i] for m in ms], ties, True) for i in range(n)]
        panel = votes(members)
        shown = [FAILED if v is None else v for v in panel]
        right = [float(s == h) for s, h in zip(shown, humans)]
        # The panel's items by kind (human label, verdict), as its metrics resample them.
        draws = kind_resamples(zip(humans, shown), RESAMPLES, 0)
        without = []
        for k in range(3):
            rest = [m for j, m in enumerate(members) if j != k]
            w = [FAILED if v is None else v for v in votes(rest)]
            without.append(num(cohen_kappa_score(humans, w)))
        out[ties] = {
            "verdicts": panel,
            "accuracy": num(accuracy_score(humans, shown)),
            "accuracy_ci": ci([np.mean([right[i] for i in idx]) for idx in draws]),
            "kappa": num(cohen_kappa_score(humans, shown)),
            "kappa_without": without,
        }
    return out


def rating_case(rng):
    n = 30
    humans = [int(x) for x in rng.integers(1, 6, size=n)]
    members = []
    for noise in (0.6, 1.0, 1.5):
        verdicts = []
        for h in humans:
            if rng.random() < 0.05:
                verdicts.append(None)
            else:
                verdicts.append(int(min(5, max(1, round(h + rng.normal(0, noise))))))
        members.append(verdicts)
    members[0][0] = members[1][0] = members[2][0] = None
    out = {"humans": humans, "members": members}
    data = np.array([[np.nan if v is None else v for v in m] for m in members], dtype=float)
    out["members_alpha"] = num(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal"))
    scale = list(range(1, 6))

    def scored(panel):
        pairs = [(h, v) for h, v in zip(humans, panel) if v is not None]
        hs = [h for h, _ in pairs]
        vs = [v for _, v in pairs]
        cats = [min(5, max(1, rounded(v))) for v in vs]
        right = [float(p is not None and min(5, max(1, rounded(p))) == h) for h, p in zip(humans, panel)]
        within = [float(p is not None and abs(p - h) <= 0.5 + 1e-9) for h, p in zip(humans, panel)]
        # Exact agreement where every rating is a whole point (a mean panel's are not).
        whole = whole_points(humans, panel)
        return {
            "verdicts": panel,
            "accuracy": num(np.mean(right)) if whole else None,
            "within_half_point": None if whole else num(np.mean(within)),
            "kappa": num(cohen_kappa_score(hs, cats, weights="quadratic", labels=scale)),
            "spearman": num(stats.spearmanr(hs, vs).statistic),
        }

    out["mean"] = scored([mean([m[i] for m in members]) for i in range(n)])
    out["first"] = scored([majority([m[i] for m in members], "first", False) for i in range(n)])
    return out


def main():
    rng = np.random.default_rng(17)
    reference = {
        "resamples": RESAMPLES,
        "pairwise": pairwise_case(rng),
        "rating": rating_case(rng),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(reference, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
