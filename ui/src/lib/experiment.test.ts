/** The builder's TOML: what the engine will parse, field by field. */
import { describe, expect, it } from "vitest";
import { buildExperiment, defaultDraft, tomlFloat, tomlString, type ExperimentDraft } from "./experiment";

function draft(fields: Partial<ExperimentDraft>): ExperimentDraft {
  return { ...defaultDraft(), ...fields };
}

const SWEEP: Partial<ExperimentDraft> = {
  name: "llmbar-sweep",
  dataset: "llmbar_natural",
  templates: ["pairwise"],
  temperature: "0, 0.7",
  top_p: "0.9",
  max_tokens: "4",
  few_shot: "0, 1",
  order: "ab",
  repeats: "1",
  seed: "42",
  items: "8",
};

describe("buildExperiment", () => {
  it("writes the example sweep", () => {
    const built = buildExperiment(draft(SWEEP), "pairwise");
    expect(built.errors).toEqual([]);
    expect(built.toml).toBe(`name = "llmbar-sweep"
dataset = "llmbar_natural"

[judge]
backend = "llama"
model = "default"
template = "pairwise"

[sweep]
temperature = [0.0, 0.7]
top_p = [0.9]
max_tokens = [4]
few_shot = [0, 1]
order = ["ab"]
repeats = 1
seed = 42

[limits]
items = 8
`);
  });

  it("lists several models and templates, and leaves out empty optional fields", () => {
    const built = buildExperiment(
      draft({ ...SWEEP, models: ["default", "/m/x.gguf"], templates: ["pairwise", "/t/mine.jinja"], items: "" }),
      "pairwise",
    );
    expect(built.toml).toContain('model = ["default", "/m/x.gguf"]\n');
    expect(built.toml).toContain('template = ["pairwise", "/t/mine.jinja"]\n');
    expect(built.toml).not.toContain("[limits]");
  });

  it("writes the endpoint of a remote judge in [judge]", () => {
    const built = buildExperiment(
      draft({
        ...SWEEP,
        backend: "openai",
        remote: { name: "oai", base_url: "https://api.openai.com/v1", model: "gpt-4o-mini", api_key_env: "OPENAI_API_KEY" },
        context_size: "4096",
      }),
      "pairwise",
    );
    expect(built.errors).toEqual([]);
    expect(built.toml).toContain(`[judge]
backend = "openai"
base_url = "https://api.openai.com/v1"
api_key_env = "OPENAI_API_KEY"
model = "gpt-4o-mini"
`);
    // context_size is a llama-only key: the engine refuses it with a remote judge.
    expect(built.toml).not.toContain("context_size");
  });

  it("adds the optional llama keys when given", () => {
    const built = buildExperiment(
      draft({ ...SWEEP, output: "json", context_size: "4096", few_shot_max_tokens: "256, 1024" }),
      "pairwise",
    );
    expect(built.toml).toContain('output = "json"\ncontext_size = 4096\n');
    expect(built.toml).toContain("few_shot_max_tokens = [256, 1024]\n");
  });

  it("writes exact verdicts and the constraint axis for local judges only", () => {
    const built = buildExperiment(draft({ ...SWEEP, exact: true, constraint: "none, grammar" }), "pairwise");
    expect(built.errors).toEqual([]);
    expect(built.toml).toContain('template = "pairwise"\nexact = true\n');
    expect(built.toml).toContain('order = ["ab"]\nconstraint = ["none", "grammar"]\n');
    const remote = buildExperiment(
      draft({
        ...SWEEP,
        exact: true,
        constraint: "grammar",
        backend: "openai",
        remote: { name: "oai", base_url: "http://x/v1", model: "m", api_key_env: null },
      }),
      "pairwise",
    );
    expect(remote.toml).not.toContain("exact");
    expect(remote.toml).not.toContain("constraint");
    const json = buildExperiment(draft({ ...SWEEP, exact: true, output: "json" }), "pairwise");
    expect(json.errors).toContain("output: exact verdicts need a one-token verdict (label or digit), not JSON");
  });

  it("leaves the order axis out for ratings", () => {
    const built = buildExperiment(draft({ ...SWEEP, templates: ["single"], order: "nonsense" }), "single");
    expect(built.errors).toEqual([]);
    expect(built.toml).not.toContain("order");
  });

  it.each([
    [{ name: "" }, "name: give the experiment a name"],
    [{ name: "a b" }, `name: "a b" must be 1 to 100 letters, digits, '.', '_' or '-'`],
    [{ dataset: "" }, "dataset: pick a dataset"],
    [{ models: [] }, "judge: pick at least one local model"],
    [{ backend: "openai" as const }, "judge: pick a remote judge"],
    [{ templates: [] }, "template: pick at least one template"],
    [{ temperature: "0, x" }, 'temperature: "x" is not a number'],
    [{ top_p: "0" }, "top_p: 0 must be above 0 and at most 1"],
    [{ max_tokens: "0" }, "max_tokens: 0 must be between 1 and 65536"],
    [{ few_shot: "1, 1" }, "few_shot: 1 is listed twice"],
    [{ order: "ab, sideways" }, 'order: "sideways" is not one of "ab", "ba", "both"'],
    [{ constraint: "regex" }, 'constraint: "regex" is not one of "none", "grammar"'],
    [{ repeats: "0" }, "repeats: 0 must be between 1 and 10000"],
    [{ seed: "-1" }, "seed: -1 must be between 0 and 9007199254740991"],
    [{ items: "1.5" }, 'items: "1.5" is not a whole number'],
    [{ context_size: "100" }, "context_size: 100 must be between 256 and 1048576"],
  ])("names the field at fault: %o", (fields, error) => {
    const built = buildExperiment(draft({ ...SWEEP, ...fields }), "pairwise");
    expect(built.toml).toBeNull();
    expect(built.errors).toContain(error);
  });
});

describe("TOML values", () => {
  it("escapes strings", () => {
    expect(tomlString('C:\\models\\a "b".gguf')).toBe('"C:\\\\models\\\\a \\"b\\".gguf"');
    expect(tomlString("a\nb\u0001")).toBe('"a\\nb\\u0001"');
  });

  it("writes floats with a decimal point", () => {
    expect([0, 1, 0.7, 1e-7, 10].map(tomlFloat)).toEqual(["0.0", "1.0", "0.7", "1e-7", "10.0"]);
  });
});
