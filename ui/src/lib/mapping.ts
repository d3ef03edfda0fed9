// The import wizard's mapping as the researcher edits it — a path per Judgelab field,
// criteria by name, label values — and the `MappingInput` the backend reads.
import type { Count, FieldMapping, LabelMapping, MappingInput } from "./bindings";

/** Judgelab's fields a mapping fills, in order, with what each holds. */
export const FIELDS: { target: string; title: string }[] = [
  { target: "id", title: "Item id (optional: the row number otherwise)" },
  { target: "question", title: "The question or instruction" },
  { target: "answer_a", title: "First answer (pairwise)" },
  { target: "answer_b", title: "Second answer (pairwise)" },
  { target: "answer", title: "The answer (rated alone)" },
  { target: "reference", title: "Reference answer (optional)" },
  { target: "human_label", title: "Human label" },
];

export interface Criterion {
  name: string;
  path: string;
}

/** The fields a guess fills, by target, and its criteria apart. */
export function fromGuess(guess: FieldMapping[]): { fields: Record<string, string>; criteria: Criterion[] } {
  const fields: Record<string, string> = {};
  const criteria: Criterion[] = [];
  for (const g of guess) {
    if (g.target.startsWith("human_labels.")) criteria.push({ name: g.target.slice("human_labels.".length), path: g.path });
    else fields[g.target] = g.path;
  }
  return { fields, criteria };
}

/** What the backend reads: the fields given (criteria as `human_labels.NAME`), the label
 *  values given a label, and the rescale where one is written. */
export function mappingInput(
  fields: Record<string, string>,
  criteria: Criterion[],
  labels: LabelMapping[],
  rescale: string,
): MappingInput {
  const out: FieldMapping[] = FIELDS.filter((f) => (fields[f.target] ?? "").trim() !== "").map((f) => ({
    target: f.target,
    path: fields[f.target].trim(),
  }));
  for (const c of criteria) {
    if (c.name.trim() !== "" && c.path.trim() !== "") out.push({ target: `human_labels.${c.name.trim()}`, path: c.path.trim() });
  }
  return {
    fields: out,
    labels: labels.filter((l) => l.label.trim() !== "").map((l) => ({ value: l.value, label: l.label.trim() })),
    rescale: rescale.trim() === "" ? null : rescale.trim(),
  };
}

/** Whether a label's values are ratings (every one a number): read as they are, maybe
 *  rescaled, rather than mapped value by value. */
export function areRatings(values: Count[]): boolean {
  return values.length > 0 && values.every((v) => v.label.trim() !== "" && Number.isFinite(Number(v.label)));
}

/** A mapping row per value, with the guessed label where there is one. */
export function labelRows(values: Count[], guess: LabelMapping[]): LabelMapping[] {
  return values.map((v) => ({ value: v.label, label: guess.find((g) => g.value === v.label)?.label ?? "" }));
}
