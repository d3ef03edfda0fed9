// Panels in the results view: what the form composes, and what it may not.
import type { PanelInput, PanelView } from "./bindings";

/** The rules a task's panels may use, with what each does. */
export function rules(task: string): { value: string; title: string }[] {
  const out = [{ value: "majority", title: "majority vote" }];
  if (task !== "pairwise") out.push({ value: "mean", title: "mean score" });
  out.push({ value: "distribution", title: "mean of exact distributions (exact trials)" });
  return out;
}

/** The first of `panel1`, `panel2`, … that no panel is named. */
export function freeName(panels: PanelView[]): string {
  const taken = new Set(panels.map((p) => p.name));
  for (let i = 1; ; i++) {
    if (!taken.has(`panel${i}`)) return `panel${i}`;
  }
}

/** The panel the form says, or what is wrong with it (the engine checks the rest). */
export function panelInput(
  name: string,
  members: number[],
  rule: string,
  ties: string,
): { input: PanelInput | null; error: string | null } {
  const trimmed = name.trim();
  if (!trimmed) return { input: null, error: "Name the panel." };
  if (members.length < 2) return { input: null, error: "Choose two or more trials." };
  return {
    input: { name: trimmed, members, rule, ties: rule === "majority" && ties ? ties : null },
    error: null,
  };
}

/** How a panel is made, in words: "majority of #1, #2, #3 (a split vote: tie)". */
export function panelText(p: PanelView): string {
  const members = p.members.map((m) => `#${m}`).join(", ");
  return `${p.rule} of ${members}${p.ties ? ` (a split vote: ${p.ties})` : ""}`;
}
