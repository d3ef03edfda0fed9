/**
 * A stand-in for the Tauri backend, for looking at the UI in a plain browser (`npx vite`,
 * then open /dev/mock.html). Dev-only: not part of `vite build` (whose only entry is
 * index.html), and never loaded by the app. It answers every command with made-up but
 * plausible data, and plays a run over its channel.
 */

import AXES from "../src/lib/axes.json";

type Cb = (payload: unknown) => void;
const callbacks = new Map<number, Cb>();
let nextId = 1;
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

const WORDS = "the judge compares two answers and decides which follows the instruction better without being swayed by length or order".split(" ");
function text(seed: number, n: number): string {
  let out = "";
  for (let i = 0; i < n; i++) out += (i ? " " : "") + WORDS[(seed * 7 + i * 13) % WORDS.length];
  return out.charAt(0).toUpperCase() + out.slice(1) + ".";
}

const datasets = [
  { name: "llmbar_natural", task: "pairwise", n_items: 100, source: "/work/main/datasets/llmbar_natural.jsonl", content_hash: "9f2c4e0a1b7d3c5e8f90" },
  { name: "synthetic_100k", task: "pairwise", n_items: 100000, source: "/data/synthetic_100k.jsonl", content_hash: "0a1b2c3d4e5f67890abc" },
  { name: "topical_chat_usr", task: "single", n_items: 360, source: "/work/main/datasets/topical_chat_usr.jsonl", content_hash: "77aa88bb99cc00dd11ee" },
];

const PAIRWISE = `{% block system %}You are a careful and impartial judge. You compare two outputs written in response to an instruction and decide which one follows the instruction better.{% endblock %}
{% block user %}
{% for ex in examples %}
# Example {{ loop.index }}
## Instruction
{{ ex.question }}
## Output (a)
{{ ex.answer_a }}
## Output (b)
{{ ex.answer_b }}
## Better output
{{ ex.label }}
{% endfor %}
# Task
## Instruction
{{ question }}
## Output (a)
{{ answer_a }}
## Output (b)
{{ answer_b }}

Which output is better? Answer with a single letter: A or B. Do not explain.
{% endblock %}`;

const templates = [
  { name: "pairwise", source: PAIRWISE, version: "3fa85f6457a1", builtin: true, reference: "pairwise" },
  { name: "single", source: "{% block user %}Rate the answer from {{ scale_min }} to {{ scale_max }}.\n{{ question }}\n{{ answer }}{% endblock %}", version: "b1c2d3e4f5a6", builtin: true, reference: "single" },
  { name: "pairwise-strict", source: PAIRWISE.replace("careful", "strict"), version: "c0ffee123456", builtin: false, reference: "/home/me/.local/share/judgelab/templates/pairwise-strict.jinja" },
];

const judges = [
  { kind: "local", model: "default", path: "/root/.cache/judgelab/models/SmolLM2-135M-Instruct.Q4_1.gguf", size_mb: 98.2, present: true },
  { kind: "local", model: "/models/qwen2.5-1.5b-instruct-q4_k_m.gguf", path: "/models/qwen2.5-1.5b-instruct-q4_k_m.gguf", size_mb: 1120.4, present: false },
  { kind: "remote", name: "openai-mini", base_url: "https://api.openai.com/v1", model: "gpt-4o-mini", api_key_env: "OPENAI_API_KEY" },
];

const experiments = [
  { name: "llmbar-demo", dataset: "llmbar_natural", created_at: "2025-11-28T14:02:11Z", n_trials: 4, running: false },
];

function item(idx: number) {
  return {
    idx,
    id: `llmbar_natural-${String(idx).padStart(4, "0")}`,
    question: text(idx, 18 + (idx % 9)),
    answer_a: text(idx + 1, 40 + (idx % 30)),
    answer_b: text(idx + 2, 25 + (idx % 50)),
    answer: null,
    reference: null,
    label: idx % 3 === 0 ? "A" : "B",
  };
}

function trials() {
  const mk = (id: number, label: string, k: number, acc: number, tok: number, p95: number, front: string) => ({
    id,
    label,
    params: [
      { name: "model", value: "default" },
      { name: "template", value: "pairwise" },
      { name: "few_shot", value: label.includes("shots=1") ? "1" : "0" },
      { name: "temperature", value: label.includes("temp=0.7") ? "0.7" : "0" },
      { name: "top_p", value: "0.9" },
      { name: "max_tokens", value: "4" },
    ],
    quality: [
      { value: acc, low: acc - 0.2, high: acc + 0.2 },
      { value: acc + 0.02, low: acc - 0.18, high: acc + 0.22 },
      { value: k, low: k - 0.33, high: k + 0.31 },
      { value: k - 0.01, low: k - 0.34, high: k + 0.3 },
    ],
    n: 20,
    n_errors: 0,
    parse_failure_rate: id === 2 ? 0.6 : 0.1,
    prompt_tokens_per_item: tok,
    completion_tokens_per_item: 2.2,
    usd_per_1k_items: null,
    latency_p50: p95 / 2,
    latency_p95: p95,
    ttft_p95: p95 / 2,
    front,
    best: id === 3,
    recommended: id === 3,
    vs_best: id === 3 ? null : { value: k - 0.182, low: k - 0.182 - 0.3, high: k - 0.182 + 0.2 },
    consistency: 0.65,
    first_preferred: 0.89,
  });
  return [
    mk(1, "#1 temp=0 shots=0", 0.043, 0.45, 340, 2864, "front"),
    mk(2, "#2 temp=0.7 shots=0", 0.062, 0.25, 340, 2683, "front"),
    mk(3, "#3 temp=0 shots=1", 0.182, 0.55, 708, 4440, "front"),
    mk(4, "#4 temp=0.7 shots=1", 0.034, 0.3, 708, 4424, "dominated"),
  ];
}

function chart(xs: number[], ys: number[], title: string) {
  const W = 800, H = 600;
  const pts = xs.map((x, i) => `<circle cx="${x}" cy="${ys[i]}" r="6" fill="${i === 3 ? "#999" : "#0072B2"}"/><line x1="${x}" x2="${x}" y1="${ys[i] - 40}" y2="${ys[i] + 40}" stroke="#0072B2" stroke-opacity="0.4"/>`).join("");
  const svg = `<svg width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" xmlns="http://www.w3.org/2000/svg"><rect width="${W}" height="${H}" fill="#fff"/><text x="400" y="30" text-anchor="middle" font-family="sans-serif" font-size="18">${title}</text><line x1="80" y1="540" x2="760" y2="540" stroke="#333"/><line x1="80" y1="60" x2="80" y2="540" stroke="#333"/><text x="420" y="580" text-anchor="middle" font-family="sans-serif" font-size="14">tokens per item</text><text x="30" y="300" font-family="sans-serif" font-size="14" transform="rotate(-90 30 300)">Cohen's kappa</text><polyline points="${xs.slice(0, 3).map((x, i) => `${x},${ys[i]}`).join(" ")}" fill="none" stroke="#0072B2" stroke-width="2"/>${pts}</svg>`;
  return { svg, width: W, height: H, hotspots: xs.map((x, i) => ({ trial_id: i + 1, x, y: ys[i], r: 6 })) };
}

function results(name: string, resamples: number) {
  const t = trials();
  return {
    name,
    dataset: "llmbar_natural",
    task: "pairwise",
    n_items: 20,
    n_expected: 80,
    n_stored: 80,
    spec: "name = \"llmbar-demo\"",
    metric: "kappa",
    columns: [
      { key: "accuracy", title: "Accuracy" },
      { key: "agreement_without_ties", title: "Agreement w/o ties" },
      { key: "kappa", title: "Cohen's κ" },
      { key: "alpha_nominal", title: "Krippendorff's α" },
    ],
    baselines: [
      { title: "longer answer wins", quality: [{ value: 0.35, low: 0.15, high: 0.55 }, { value: 0.35, low: 0.15, high: 0.55 }, { value: -0.3, low: -0.67, high: 0.13 }, { value: -0.31, low: -0.7, high: 0.1 }] },
      { title: "majority (always A)", quality: [{ value: 0.5, low: 0.3, high: 0.7 }, { value: 0.5, low: 0.3, high: 0.7 }, { value: 0, low: 0, high: 0 }, { value: 0, low: 0, high: 0 }] },
    ].map((b) => (resamples === 0 ? { ...b, quality: b.quality.map((q) => ({ value: q.value, low: null, high: null })) } : b)),
    trials: resamples === 0 ? t.map((x) => ({ ...x, quality: x.quality.map((q) => ({ value: q.value, low: null, high: null })) })) : t,
    findings: [
      "Not ready: no trial clearly beats always answering \"A\"; the most promising is #3 (one few-shot example), κ 0.182 [−0.148, 0.492].",
      "This judge picked the answer shown first in 89% of its verdicts: judge both orders.",
      "With 20 items the intervals are wide: judge more items before deciding.",
    ],
    pareto_cost: chart([160, 180, 640, 660], [400, 380, 220, 430], "Quality vs cost"),
    pareto_latency: chart([500, 460, 720, 700], [400, 380, 220, 430], "Quality vs p95 latency"),
    cost_title: "tokens per item",
    resamples,
  };
}

function listing(i: number) {
  const human = i % 3 === 0 ? "A" : "B";
  const verdict = i % 5 === 0 ? null : i % 2 === 0 ? "A" : "B";
  return {
    item_id: `llmbar_natural-${String(i * 3).padStart(4, "0")}`,
    repeat: 0,
    swapped: false,
    human,
    verdict,
    failure: verdict === null ? "no_label" : null,
    correct: verdict === human,
    latency_ms: 800 + ((i * 137) % 2000),
    prompt_tokens: 340 + i,
    completion_tokens: 2,
  };
}

const handlers: Record<string, (args: any) => unknown> = {
  sweep_axes: () => AXES,
  app_info: () => ({ version: "0.1.0", db_path: "/root/.local/share/judgelab/judgelab.sqlite", default_model: judges[0].path, bundled_datasets: ["/work/main/datasets/llmbar_natural.jsonl", "/work/main/datasets/pandalm_test.jsonl", "/work/main/datasets/topical_chat_usr.jsonl"] }),
  list_datasets: () => datasets,
  import_dataset: ({ path, name }) => {
    if (path.includes("bad")) {
      throw { code: "invalid_input", message: `${path}: 1 problem, nothing imported`, details: [`${path}:2: answer_a: missing`, `${path}:2: human_label: missing`] };
    }
    const n = name || path.split("/").pop().replace(/\.\w+$/, "");
    const existing = datasets.find((d) => d.name === n);
    if (existing) return { dataset: existing, already: true };
    const d = { name: n, task: "pairwise", n_items: 999, source: path, content_hash: "abcdef0123456789" };
    datasets.push(d);
    return { dataset: d, already: false };
  },
  dataset_detail: ({ name }) => {
    const d = datasets.find((x) => x.name === name)!;
    return {
      summary: d,
      labels: d.task === "single" ? [1, 2, 3, 4, 5].map((l) => ({ label: String(l), n: 30 + l * 12 })) : [{ label: "A", n: 42 }, { label: "B", n: 58 }],
      lengths: Array.from({ length: 12 }, (_, i) => ({ lo: i * 200, hi: (i + 1) * 200, n: Math.round(80 * Math.exp(-((i - 2.5) ** 2) / 6)) })),
      median_length: 512,
      scale: d.task === "single" ? [1, 5] : null,
    };
  },
  dataset_items: async ({ name, offset, limit }) => {
    await delay(80);
    const d = datasets.find((x) => x.name === name)!;
    const end = Math.min(d.n_items, offset + limit);
    const items = [];
    for (let i = offset; i < end; i++) items.push(item(i));
    return { total: d.n_items, offset, items };
  },
  list_templates: () => templates,
  save_template: ({ name, source }) => {
    if (!/^[A-Za-z0-9_-]+$/.test(name)) throw { code: "invalid_input", message: `template name "${name}": use letters, digits, - and _`, details: [] };
    const t = { name, source, version: Math.random().toString(16).slice(2, 14), builtin: false, reference: `/home/me/.local/share/judgelab/templates/${name}.jinja` };
    const i = templates.findIndex((x) => x.name === name);
    if (i >= 0) templates[i] = t;
    else templates.push(t);
    return t;
  },
  preview_template: async ({ request }) => {
    await delay(150);
    if (request.source.includes("{{ nope")) throw { code: "invalid_input", message: "template: unknown variable `nope` (line 3)", details: [] };
    const it = item(request.item_idx);
    return {
      messages: [
        { role: "system", content: "You are a careful and impartial judge. You compare two outputs written in response to an instruction and decide which one follows the instruction better." },
        { role: "user", content: `# Task\n## Instruction\n${it.question}\n## Output (a)\n${it.answer_a}\n## Output (b)\n${it.answer_b}\n\nWhich output is better? Answer with a single letter: A or B. Do not explain.` },
      ],
      n_tokens: request.model ? 312 + request.few_shot * 290 : null,
      item_id: it.id,
      label: it.label,
    };
  },
  list_judges: () => judges,
  add_local_judge: ({ path }) => {
    if (!path.endsWith(".gguf")) throw { code: "invalid_input", message: `${path}: not a GGUF file (bad magic)`, details: [] };
    const j = { kind: "local", model: path, path, size_mb: 500, present: true };
    judges.splice(judges.length - 1, 0, j);
    return j;
  },
  add_remote_judge: ({ name, baseUrl, model, apiKeyEnv }) => {
    if (!/^https?:\/\//.test(baseUrl)) throw { code: "invalid_input", message: `base URL "${baseUrl}": expected http:// or https://, up to /v1`, details: [] };
    const j = { kind: "remote", name, base_url: baseUrl, model, api_key_env: apiKeyEnv };
    judges.push(j);
    return j;
  },
  plan_experiment: async ({ spec }) => {
    await delay(200);
    const count = (key: string) => {
      const m = spec.match(new RegExp(`^${key} = (.*)$`, "m"));
      if (!m) return 1;
      return m[1].startsWith("[") ? m[1].split(",").length : 1;
    };
    const n_trials = ["model", "template", "temperature", "top_p", "max_tokens", "few_shot", "order"].reduce((p, k) => p * count(k), 1);
    const items = Number(spec.match(/^items = (\d+)/m)?.[1] ?? 100);
    const name = spec.match(/^name = "(.*)"/m)?.[1] ?? "";
    return { name, dataset: "llmbar_natural", n_trials, n_items: items, n_calls: n_trials * items, n_done: 0, prompt_tokens: n_trials * items * 420, est_seconds: name === "llmbar-demo" ? 132 : null, conflicts: name === "llmbar-demo", spec_path: `/x/${name}.toml` };
  },
  start_run: ({ spec, onEvent }) => {
    const name = spec.match(/^name = "(.*)"/m)?.[1] ?? "x";
    const cb = () => callbacks.get(onEvent.id);
    let index = 0;
    const send = (message: unknown) => cb()?.({ index: index++, message });
    const total = 32;
    let done = 0;
    if (!experiments.some((e) => e.name === name)) {
      experiments.push({ name, dataset: "llmbar_natural", created_at: new Date().toISOString(), n_trials: 4, running: true });
    }
    setTimeout(() => send({ event: "loading", model: "default" }), 200);
    setTimeout(() => {
      send({ event: "started", experiment: name, resumed: false, n_trials: 4, total, done });
      const timer = setInterval(() => {
        if ((window as any).__stop?.[name]) {
          clearInterval(timer);
          (window as any).__stop[name] = false;
          send({ event: "finished", interrupted: true, judged_now: done, n_errors: 0 });
          return;
        }
        done++;
        send({ event: "progress", trial_idx: Math.floor((done - 1) / 8), done, total, n_failed: Math.floor(done / 7), verdicts_per_second: 2.4, eta_seconds: (total - done) / 2.4 });
        if (done >= total) {
          clearInterval(timer);
          experiments.forEach((e) => {
            if (e.name === name) e.running = false;
          });
          send({ event: "finished", interrupted: false, judged_now: total, n_errors: 0 });
        }
      }, (window as any).__runSpeed ?? 250);
    }, 900);
    return name;
  },
  stop_run: ({ name }) => {
    (window as any).__stop = { ...((window as any).__stop ?? {}), [name]: true };
    return true;
  },
  list_experiments: () => experiments,
  experiment_results: async ({ name, resamples }) => {
    await delay(resamples > 0 ? 400 : 50);
    return results(name, resamples);
  },
  trial_detail: async ({ trialId, filter, label, offset, limit }) => {
    await delay(100);
    let all = Array.from({ length: 20 }, (_, i) => listing(i));
    if (filter === "wrong") all = all.filter((v) => !v.correct);
    if (filter === "parse_failures") all = all.filter((v) => v.verdict === null);
    if (filter === "errors") all = [];
    if (label) all = all.filter((v) => v.human === label);
    return {
      trial: trials()[trialId - 1],
      confusion: { rows: ["A", "B"], columns: ["A", "B", "failure"], counts: [[5, 1, 1], [4, 7, 2]] },
      total: all.length,
      offset,
      verdicts: all.slice(offset, offset + limit),
      labels: ["A", "B"],
    };
  },
  verdict_detail: async ({ itemId }) => {
    await delay(100);
    const i = Number(itemId.split("-").pop()) / 3;
    const it = item(i * 3);
    return {
      listing: listing(i),
      question: it.question,
      messages: [
        { role: "system", content: "You are a careful and impartial judge." },
        { role: "user", content: `# Task\n## Instruction\n${it.question}\n## Output (a)\n${it.answer_a}\n## Output (b)\n${it.answer_b}\n\nWhich output is better?` },
      ],
      prompt_verified: true,
      raw_output: listing(i).verdict ?? "The first output",
      error: null,
      seed: 2837461,
      ttft_ms: 790.5,
      attempts: 1,
      cost_usd: null,
    };
  },
  compare_trials: async ({ first, second, metric }) => {
    await delay(200);
    return { first, second, metric: metric ?? "kappa", n_pairs: 20, first_only: 5, second_only: 2, mcnemar_p: 0.453, difference: { value: 0.139, low: -0.12, high: 0.41 } };
  },
  export_report: async ({ dir }) => {
    await delay(300);
    return ["report.html", "report.md", "trials.csv", "verdicts.csv", "experiment.toml", "pareto-quality-cost.svg", "pareto-quality-cost.png", "pareto-quality-latency.svg", "pareto-quality-latency.png", "latency-cdf.svg", "latency-cdf.png"].map((f) => `${dir}/${f}`);
  },
  export_chart: ({ path }) => path,
  "plugin:dialog|open": ({ options }) => (options?.directory ? "/home/me/reports/llmbar" : "/home/me/data/my_labels.jsonl"),
  "plugin:dialog|save": () => "/home/me/charts/pareto.svg",
};

(window as any).__TAURI_INTERNALS__ = {
  transformCallback(cb: Cb) {
    const id = nextId++;
    callbacks.set(id, cb);
    return id;
  },
  unregisterCallback(id: number) {
    callbacks.delete(id);
  },
  async invoke(cmd: string, args: any) {
    const handler = handlers[cmd];
    if (!handler) throw { code: "internal", message: `mock: no command ${cmd}`, details: [] };
    await delay(20);
    return handler(args ?? {});
  },
  metadata: { currentWindow: { label: "main" }, currentWebview: { label: "main", windowLabel: "main" } },
};

await import("../src/main");
