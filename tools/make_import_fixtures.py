"""Writes the mapped-import fixtures of crates/core/tests/it/data: an MT-Bench-style Parquet
file (the question and answers inside `conversation_a` / `conversation_b` message lists,
the label in `winner` as model_a / model_b / tie / "tie (bothbad)"), and the canonical JSONL
the same rows map to. The rows are made up here (no published text); run once with pyarrow:

    python tools/make_import_fixtures.py
"""

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


def main():
    OUT.mkdir(parents=True, exist_ok=True)
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
