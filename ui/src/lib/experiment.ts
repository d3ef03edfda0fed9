/**
 * The experiment builder's model: a draft of form fields (text, as typed) and the TOML
 * experiment file it stands for. The engine parses and validates the file again
 * (`core::experiment::from_toml`). The sweep's axes, their ranges, choices and defaults come
 * from the engine's registry (`core::sweep`, through the `sweep_axes` command), so the
 * builder can point at a field before asking the engine for a plan.
 */
import type { AxisView } from "./bindings";
import { parseChoices, parseFloats, parseInts, parseOptionalInt, splitList, type Parsed } from "./lists";

/** A remote judge as the builder needs it: the endpoint and the model it serves. */
export interface RemoteJudge {
  name: string;
  base_url: string;
  model: string;
  api_key_env: string | null;
  /** Requests in flight at once; null: the engine's default. */
  concurrency: number | null;
}

export type OutputKind = "" | "label" | "digit" | "json";

/** The builder's fields. Sweep values stay text so that what the user typed survives. */
export interface ExperimentDraft {
  name: string;
  dataset: string;
  /** Local judges: `default` or GGUF paths. */
  models: string[];
  /** Remote judges, from the judges list. Local and remote judges may be mixed. */
  remotes: RemoteJudge[];
  /** Template references: built-in names or `.jinja` paths. */
  templates: string[];
  /** Empty: the task's default (a label for pairwise data, a digit for ratings). */
  output: OutputKind;
  temperature: string;
  top_p: string;
  max_tokens: string;
  few_shot: string;
  few_shot_max_tokens: string;
  /** Which examples: 0 the pool's first, another number a seeded draw from the pool. */
  few_shot_set: string;
  order: string;
  /** Output constraints, local judges only: `none`, `grammar`. */
  constraint: string;
  /** Requests in flight each remote trial's latency is measured at; empty: the judge's own. */
  concurrency: string;
  /** Local judges: the model file as it is (`source`) or made in other types (`Q8_0, Q4_0`). */
  quantization: string;
  /** The longest input shown, in the judge's tokens (`none`: whole), e.g. `none, 256`; empty: whole. */
  input_max_tokens: string;
  /** How an input over its budget is shortened: `head_tail`, `summary` (each trial's judge summarises it first), or both. */
  input_strategy: string;
  /** Local judges: verdicts from the first token's exact distribution. */
  exact: boolean;
  repeats: string;
  seed: string;
  items: string;
  context_size: string;
  /** A seeded subset of this many of the grid's trials; empty: all. */
  sample: string;
  /** `[limits]`: the dev split (ranks the trials), the test split (confirms the pick), the few-shot pool. */
  dev: string;
  test: string;
  pool: string;
  /** `[selection]`: every trial on every dev item, or a race that drops clearly worse trials. */
  strategy: "grid" | "race";
  /** The metric that ranks the trials (one the dataset's task supports); empty: kappa. */
  metric: string;
  /** A race: dev items per round, and none dropped before this many. */
  round: string;
  min_items: string;
  /** The best this many judge the test split; empty: the pick and those indistinguishable from it. */
  confirm: string;
  /** Budgets that stop a run cleanly with what it has. */
  max_calls: string;
  max_usd: string;
  max_seconds: string;
}


export function defaultDraft(): ExperimentDraft {
  return {
    name: "",
    dataset: "",
    models: ["default"],
    remotes: [],
    templates: [],
    output: "",
    temperature: "0",
    top_p: "1",
    max_tokens: "8",
    few_shot: "0",
    few_shot_max_tokens: "",
    few_shot_set: "0",
    order: "ab",
    constraint: "none",
    concurrency: "",
    quantization: "source",
    input_max_tokens: "",
    input_strategy: "head_tail",
    exact: false,
    repeats: "1",
    seed: "42",
    items: "",
    context_size: "",
    sample: "",
    dev: "",
    test: "",
    pool: "",
    strategy: "grid",
    metric: "",
    round: "",
    min_items: "",
    confirm: "",
    max_calls: "",
    max_usd: "",
    max_seconds: "",
  };
}

/** The draft's fields of the sweep's axes: their keys in the experiment file. */
export type SweepKey =
  | "temperature"
  | "top_p"
  | "max_tokens"
  | "few_shot"
  | "few_shot_max_tokens"
  | "few_shot_set"
  | "order"
  | "constraint"
  | "concurrency"
  | "quantization"
  | "input_max_tokens"
  | "input_strategy";

/** Which kinds of judges an experiment has. */
export interface JudgeKinds {
  local: boolean;
  remote: boolean;
}

/**
 * The axes of the `[sweep]` table the builder shows as fields, in the registry's order: those
 * that apply to this experiment's dataset and judges (an axis of local judges where it has no
 * remote one, of remote judges where it has no local one). The judge axis is the judge
 * checklist itself.
 */
export function sweepAxes(axes: AxisView[], task: string | null, judges: JudgeKinds): AxisView[] {
  return axes.filter(
    (a) =>
      a.section === "sweep" &&
      a.kind !== "name" &&
      (a.applies === "all" ||
        (a.applies === "pairwise" && task !== "single") ||
        (a.applies === "local" && !judges.remote) ||
        (a.applies === "remote" && judges.remote && !judges.local)),
  );
}

/** A judge name the engine accepts, from a file stem or an endpoint's name. */
function judgeName(text: string, taken: Set<string>): string {
  const base = text.replace(/[^A-Za-z0-9._\-/:]/g, "-").slice(0, 90) || "judge";
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base}-${i}`;
  taken.add(name);
  return name;
}

/** An axis's values as typed, checked as the engine will check them; `[]` for an empty optional axis. */
function parseAxis(axis: AxisView, text: string): Parsed<number | string> {
  if (text.trim() === "" && axis.default === "") return { ok: true, values: [] };
  const range = { min: axis.min ?? 0, max: axis.max ?? 0, exclusiveMin: axis.above_min };
  // An input budget's levels may include `none`, the inputs whole, to compare against.
  if (axis.key === "input_max_tokens") {
    const whole = splitList(text).includes("none");
    const rest = splitList(text).filter((p) => p !== "none");
    if (rest.length === 0) return { ok: true, values: whole ? ["none"] : [] };
    const levels = parseInts(axis.key, rest.join(", "), range);
    return levels.ok ? { ok: true, values: [...(whole ? ["none"] : []), ...levels.values] } : levels;
  }
  switch (axis.kind) {
    case "real":
      return parseFloats(axis.key, text, range);
    case "count":
      return parseInts(axis.key, text, range);
    default:
      return parseChoices(axis.key, text, axis.choices);
  }
}

/** A TOML basic string: quotes and backslashes escaped (Windows paths have backslashes). */
export function tomlString(s: string): string {
  let out = "";
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return `"${out}"`;
}

/** A TOML float: always with a decimal point or exponent, so `0` reads as `0.0`. */
export function tomlFloat(v: number): string {
  return Number.isInteger(v) && Math.abs(v) < 1e21 ? `${v}.0` : String(v);
}

function tomlArray<T>(values: T[], show: (v: T) => string): string {
  return `[${values.map(show).join(", ")}]`;
}

/** One value as a scalar, several as a list: `model = "default"` reads better than `["default"]`. */
function oneOrMany(values: string[]): string {
  return values.length === 1 ? tomlString(values[0]) : tomlArray(values, tomlString);
}

/** The validated experiment, or what is wrong with the draft. */
export interface BuiltExperiment {
  toml: string | null;
  errors: string[];
}

const NAME = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * The experiment file of `draft` for a dataset of `task` (`pairwise` or `single`; `null`
 * while unknown), with the sweep's `axes` as the engine declares them. An axis that does not
 * apply (answer order for ratings, a grammar for remote judges) is left out.
 */
export function buildExperiment(draft: ExperimentDraft, task: string | null, axes: AxisView[]): BuiltExperiment {
  const errors: string[] = [];
  const take = <T>(p: Parsed<T>): T[] => {
    if (p.ok) return p.values;
    errors.push(p.error);
    return [];
  };

  const name = draft.name.trim();
  if (!NAME.test(name)) {
    errors.push(
      name === ""
        ? "name: give the experiment a name"
        : `name: "${name}" must be 1 to 100 letters, digits, '.', '_' or '-'`,
    );
  }
  if (draft.dataset.trim() === "") errors.push("dataset: pick a dataset");

  const locals = draft.models;
  const remotes = draft.remotes;
  if (locals.length + remotes.length === 0) errors.push("judge: pick at least one judge");
  const local = remotes.length === 0;
  // One [judge] table serves local models, or one endpoint; anything more is [[judges]].
  const named = remotes.length > 1 || (remotes.length > 0 && locals.length > 0);
  if (draft.templates.length === 0) errors.push("template: pick at least one template");

  const sweep: string[] = [];
  for (const axis of sweepAxes(axes, task, { local: locals.length > 0, remote: remotes.length > 0 })) {
    const values = take(parseAxis(axis, draft[axis.key as SweepKey] ?? ""));
    // An axis that is not always shown, left at its default, is the experiment without it:
    // not written.
    const atDefault = !axis.always_shown && values.length === 1 && String(values[0]) === axis.default;
    if (values.length === 0 || atDefault) continue;
    const count = (v: number | string) => (typeof v === "string" ? tomlString(v) : String(v));
    const show = axis.kind === "real" ? tomlFloat : axis.kind === "count" ? count : tomlString;
    sweep.push(`${axis.key} = ${tomlArray(values as never[], show as (v: never) => string)}`);
  }
  if (locals.length > 0 && draft.exact && draft.output === "json") {
    errors.push("output: exact verdicts need a one-token verdict (label or digit), not JSON");
  }
  const repeats = take(parseOptionalInt("repeats", draft.repeats, { min: 1, max: 10000 }))[0] ?? null;
  const seed = take(parseOptionalInt("seed", draft.seed, { min: 0, max: Number.MAX_SAFE_INTEGER }))[0] ?? null;
  const items = take(parseOptionalInt("items", draft.items, { min: 1, max: Number.MAX_SAFE_INTEGER }))[0] ?? null;
  const count = (key: string, text: string): number | null =>
    take(parseOptionalInt(key, text, { min: 1, max: Number.MAX_SAFE_INTEGER }))[0] ?? null;
  const sample = count("sample", draft.sample);
  const dev = count("dev", draft.dev);
  const test = count("test", draft.test);
  const pool = count("pool", draft.pool);
  const race = draft.strategy === "race";
  const round = race ? count("round", draft.round) : null;
  const minItems = race ? count("min_items", draft.min_items) : null;
  const confirm = count("confirm", draft.confirm);
  if (confirm !== null && test === null) errors.push("confirm: chooses who judges the test split: set a test split too");
  const maxCalls = count("max_calls", draft.max_calls);
  const positive = (key: string, text: string): number | null => {
    if (text.trim() === "") return null;
    const v = Number(text.trim());
    if (!Number.isFinite(v) || v <= 0) {
      errors.push(`${key}: "${text.trim()}" must be a positive number`);
      return null;
    }
    return v;
  };
  const maxUsd = positive("max_usd", draft.max_usd);
  const maxSeconds = positive("max_seconds", draft.max_seconds);
  const contextSize =
    locals.length > 0
      ? (take(parseOptionalInt("context_size", draft.context_size, { min: 256, max: 1 << 20 }))[0] ?? null)
      : null;

  if (errors.length > 0) return { toml: null, errors };

  const lines: string[] = [`name = ${tomlString(name)}`, `dataset = ${tomlString(draft.dataset)}`, ""];
  const localKeys = (): string[] => [
    ...(contextSize !== null ? [`context_size = ${contextSize}`] : []),
    ...(draft.exact ? ["exact = true"] : []),
  ];
  // Several URLs (separated by spaces) are a pool of endpoints serving the same model.
  const urls = (r: RemoteJudge): string[] => r.base_url.split(/[\s,]+/).filter((u) => u !== "");
  const endpointKeys = (r: RemoteJudge): string[] => [
    urls(r).length > 1 ? `base_url = [${urls(r).map(tomlString).join(", ")}]` : `base_url = ${tomlString(r.base_url.trim())}`,
    ...(r.api_key_env ? [`api_key_env = ${tomlString(r.api_key_env)}`] : []),
    ...(r.concurrency !== null ? [`concurrency = ${r.concurrency}`] : []),
  ];
  if (named) {
    const taken = new Set<string>();
    for (const model of locals) {
      const stem = model === "default" ? "default" : (model.split(/[\\/]/).pop() ?? model).replace(/\.gguf$/i, "");
      lines.push("[[judges]]", `name = ${tomlString(judgeName(stem, taken))}`, 'backend = "llama"');
      lines.push(`model = ${tomlString(model)}`, ...localKeys(), "");
    }
    for (const r of remotes) {
      lines.push("[[judges]]", `name = ${tomlString(judgeName(r.name, taken))}`, 'backend = "openai"');
      lines.push(...endpointKeys(r), `model = ${tomlString(r.model)}`, "");
    }
    lines.push("[judge]");
  } else if (local) {
    lines.push("[judge]", 'backend = "llama"', `model = ${oneOrMany(locals)}`);
  } else {
    // The engine reads the endpoint from [judge] itself, not from a sub-table.
    lines.push("[judge]", 'backend = "openai"', ...endpointKeys(remotes[0]), `model = ${tomlString(remotes[0].model)}`);
  }
  lines.push(`template = ${oneOrMany(draft.templates)}`);
  if (draft.output) lines.push(`output = ${tomlString(draft.output)}`);
  if (local && !named) lines.push(...localKeys());

  lines.push("", "[sweep]");
  lines.push(...sweep);
  if (repeats !== null) lines.push(`repeats = ${repeats}`);
  if (seed !== null) lines.push(`seed = ${seed}`);
  if (sample !== null) lines.push(`sample = ${sample}`);

  const limits: string[] = [
    ...(items !== null ? [`items = ${items}`] : []),
    ...(dev !== null ? [`dev = ${dev}`] : []),
    ...(test !== null ? [`test = ${test}`] : []),
    ...(pool !== null ? [`pool = ${pool}`] : []),
    ...(maxCalls !== null ? [`max_calls = ${maxCalls}`] : []),
    ...(maxUsd !== null ? [`max_usd = ${tomlFloat(maxUsd)}`] : []),
    ...(maxSeconds !== null ? [`max_seconds = ${tomlFloat(maxSeconds)}`] : []),
  ];
  if (limits.length > 0) lines.push("", "[limits]", ...limits);
  const selection: string[] = [
    ...(draft.metric !== "" ? [`metric = ${tomlString(draft.metric)}`] : []),
    ...(race ? ['strategy = "race"'] : []),
    ...(round !== null ? [`round = ${round}`] : []),
    ...(minItems !== null ? [`min_items = ${minItems}`] : []),
    ...(confirm !== null ? [`confirm = ${confirm}`] : []),
  ];
  if (selection.length > 0) lines.push("", "[selection]", ...selection);

  return { toml: lines.join("\n") + "\n", errors: [] };
}
