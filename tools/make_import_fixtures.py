"""Writes the mapped-import fixtures of crates/core/tests/it/data: an MT-Bench-style Parquet
file (the question and answers inside `conversation_a` / `conversation_b` message lists,
the label in `winner` as model_a / model_b / tie / "tie (bothbad)"), a HelpSteer2-style CSV
(a prompt, a response and five attributes rated 0-4 in columns), and the canonical JSONL
each maps to. The rows are made up here (no published text); run once with pyarrow:

    python tools/make_import_fixtures.py
"""

import csv
import json
import pathlib

import pyarrow as pa
import pyarrow.parquet as pq

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates/core/tests/it/data"

ROWS = [
    ("What is 2 + 2?", "4.", "5.", "model_a", "A"),
    ("Name a prime number above 10.", "12", "13", "model_b", "B"),
    ("Say hello in French.", "Bonjour.", "Salut !", "tie", "tie"),
    ("Capital of Australia?", "Sydney.", "Melbourne.", "tie (bothbad)", "tie"),
]


def conversation(question, answer):
    return [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]


RATED = [
    ("Explain rain in one line.", "Water vapour condenses into drops that fall.", (4, 4, 4, 3, 1)),
    ("Give a synonym of big.", "Large.", (3, 4, 4, 1, 0)),
    ("Translate 'cat' to German.", "Hund.", (0, 1, 4, 0, 0)),
]
ATTRIBUTES = ["helpfulness", "correctness", "coherence", "complexity", "verbosity"]


def helpsteer():
    with open(OUT / "helpsteer_style.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["prompt", "response"] + ATTRIBUTES)
        for q, a, scores in RATED:
            w.writerow([q, a] + list(scores))
    with open(OUT / "helpsteer_style.canonical.jsonl", "w") as f:
        for i, (q, a, scores) in enumerate(RATED):
            labels = dict(zip(ATTRIBUTES[1:], scores[1:]))
            # The CSV's rows start at its second line, after the header.
            row = {"id": str(i + 2), "task": "single", "question": q, "answer": a, "human_label": scores[0], "human_labels": labels}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    helpsteer()
    table = pa.table(
        {
            "question_id": [81 + i for i in range(len(ROWS))],
            "model_a": ["model-x"] * len(ROWS),
            "model_b": ["model-y"] * len(ROWS),
            "conversation_a": [conversation(q, a) for q, a, _, _, _ in ROWS],
            "conversation_b": [conversation(q, b) for q, _, b, _, _ in ROWS],
            "winner": [w for *_, w, _ in ROWS],
        }
    )
    pq.write_table(table, OUT / "mt_bench_style.parquet", compression="snappy")
    with open(OUT / "mt_bench_style.canonical.jsonl", "w") as f:
        for i, (q, a, b, _, label) in enumerate(ROWS):
            row = {"id": str(i + 1), "task": "pairwise", "question": q, "answer_a": a, "answer_b": b, "human_label": label}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
