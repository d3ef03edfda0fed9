// The labelling queue and the labels the results are against: which key gives which
// label, the annotator's name kept between sessions, what the trials said of an item.
import type { LabelKey, QueuedItem } from "./bindings";

const ANNOTATOR_KEY = "judgelab.annotator";

/** The label `key` gives, if it is one of the task's keys. */
export function keyLabel(keys: LabelKey[], key: string): LabelKey | null {
  return keys.find((k) => k.key === key.toLowerCase()) ?? null;
}

/** The name labels were last given under here ("" before any: the backend's default). */
export function savedAnnotator(): string {
  try {
    return globalThis.localStorage?.getItem(ANNOTATOR_KEY) ?? "";
  } catch {
    return "";
  }
}

export function saveAnnotator(name: string): void {
  try {
    globalThis.localStorage?.setItem(ANNOTATOR_KEY, name);
  } catch {
    // A window without storage asks again next time; nothing is lost.
  }
}

/** What the trials said of an item: "the trials said: #1 A · #2 B B · #3 failed". */
export function votesText(item: QueuedItem): string {
  if (item.votes.length === 0) return "No trial has judged it.";
  const said = item.votes.map((v) => `#${v.trial_id} ${v.verdicts.map((x) => x ?? "failed").join(" ")}`);
  return `The trials said: ${said.join(" · ")}.`;
}

/** The choices of the Results screen's labels select, as `kind|annotator` values. */
export function labelChoices(annotators: string[]): { value: string; title: string }[] {
  const out = [{ value: "original|", title: "the dataset's labels" }];
  if (annotators.length === 0) return out;
  if (annotators.length > 1) {
    out.push({ value: "annotations|", title: "the annotators' labels (combined)" });
    out.push({ value: "both|", title: "the annotators' where given, else the dataset's" });
  }
  for (const a of annotators) {
    out.push({ value: `annotations|${a}`, title: `${a}'s labels` });
    out.push({ value: `both|${a}`, title: `${a}'s where given, else the dataset's` });
  }
  return out;
}

/** A `kind|annotator` value as the backend's labels input. */
export function parseChoice(value: string): { kind: string; annotator: string | null } {
  const [kind, annotator] = value.split("|");
  return { kind, annotator: annotator ? annotator : null };
}
