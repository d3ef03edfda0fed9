#!/usr/bin/env bash
# The device check of a CUDA build of judgelab, run from the repository's root on a lent
# GPU machine (CUDA 13 driver, runtime and cuBLAS; no Rust, no network).
#
# `cargo xtask gpu check` packs the stripped build, the floor tool linked to it and the
# default model into chunks `.gpu-check/1`, `.gpu-check/2`, …; each device call carries
# the next one and runs this script. A call that leaves the set incomplete keeps its chunk
# and stops at once (the machine stays warm 30 s for the next call); the call that
# completes it runs the check, in about three minutes:
#   1. the GPU, and what `judgelab info` sees;
#   2. `judgelab bench` on the GPU: the planned exact sweep against the naive loop and the
#      floor of this build (the same prefill loop over the same CUDA kernels), tokens/s;
#   3. one exact sweep judged twice, on the GPU and on the CPU (`gpu_layers = 0`), and
#      `judgelab compare` of the two: verdict agreement, flips, divergence;
#   4. the GPU memory used (nvidia-smi, sampled) and the process's peak RSS.
# Everything it prints also goes to $OUT/gpu-check.log when $OUT is set. On a machine
# without nvidia-smi it runs all the same (a rehearsal on the CPU); JUDGELAB_CHECK_ITEMS
# makes the sweeps smaller for that (default 98; the bench takes at most 48).
set -uo pipefail
cd "$(dirname "$0")/.."

keep=/tmp/judgelab-gpu-check
mkdir -p "$keep"
for folder in .gpu-check/*/; do
    [ -f "$folder/manifest" ] || continue
    cp "$folder/manifest" "$keep/manifest"
    cp "$folder/chunk" "$keep/chunk.$(basename "$folder" | xargs printf '%04d')"
done
if [ ! -f "$keep/manifest" ]; then
    echo "no .gpu-check/N carried: run \`cargo xtask gpu check\` and carry its folders" >&2
    exit 2
fi
want=$(awk '/^chunks/ {print $2}' "$keep/manifest")
sha=$(awk '/^sha256/ {print $2}' "$keep/manifest")
have=$(ls "$keep"/chunk.* 2>/dev/null | wc -l)
if [ "$have" -lt "$want" ]; then
    echo "have $have of $want chunks: carry the next .gpu-check folder in a call right away"
    exit 0
fi

log=/dev/null
[ -n "${OUT:-}" ] && log="$OUT/gpu-check.log"
exec > >(tee "$log") 2>&1

work=/tmp/judgelab-gpu-run
rm -rf "$work" && mkdir -p "$work/cache/judgelab/models"
if ! cat "$keep"/chunk.* | tee >(sha256sum | awk '{print $1}' > "$work/sha") | tar -xJf - -C "$work"; then
    echo "cannot unpack the chunks" && exit 1
fi
if [ "$(cat "$work/sha")" != "$sha" ]; then
    echo "the chunks do not join into the packed archive (sha256 differs): pack again" && exit 1
fi
mv "$work"/*.gguf "$work/cache/judgelab/models/"
export XDG_CACHE_HOME="$work/cache"
bin="$work/judgelab-cuda"
db="$work/check.sqlite"

# The CUDA 13 runtime and cuBLAS of this machine: its toolkit, or NVIDIA's pip packages.
libs=""
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
    $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, "cu13", "lib") for p in nvidia.__path__))' 2>/dev/null); do
    [ -e "$dir/libcublas.so.13" ] && libs="$libs:$dir"
done
export LD_LIBRARY_PATH="${libs#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "== CUDA libraries from: ${LD_LIBRARY_PATH:-(none found)}"

items=${JUDGELAB_CHECK_ITEMS:-98}
bench_items=$((items < 48 ? items : 48))
smi() { command -v nvidia-smi > /dev/null && nvidia-smi "$@"; }

echo "== the GPU"
smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "no nvidia-smi here"
"$bin/judgelab" --db "$db" info || exit 1

sampler() {
    : > "$work/$1.mem"
    if command -v nvidia-smi > /dev/null; then
        nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 > "$work/$1.mem" &
        echo $!
    else
        echo 0
    fi
}
peak_mem() {
    [ "$1" != 0 ] && kill "$1" 2>/dev/null
    sort -n "$work/$2.mem" | tail -1
}
idle=$(smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)

echo "== judgelab bench on the GPU ($bench_items items, 12 trials): planned vs naive vs this build's floor"
pid=$(sampler bench)
# The process's peak resident memory, read by Python from its child's resource usage.
python3 - "$bin/judgelab" --db "$work/bench.sqlite" bench --items "$bench_items" \
    --floor-tool "$bin/judgelab-floor" <<'PY' || exit 1
import resource, subprocess, sys
code = subprocess.call(sys.argv[1:])
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"judgelab bench: peak RSS {peak:.0f} MiB")
sys.exit(code)
PY
echo "GPU memory: $idle MiB idle, $(peak_mem "$pid" bench) MiB at most during the bench"

echo "== one exact sweep on the GPU and on the CPU"
sweep() {
    cat > "$work/$1.toml" <<EOF
name = "check-$1"
dataset = "$PWD/datasets/llmbar_natural.jsonl"
[judge]
backend = "llama"
model = "default"
template = "pairwise"
exact = true
$2
[sweep]
temperature = [0.0, 1.0]
top_p = [1.0]
max_tokens = [1]
few_shot = [2]
order = ["both"]
seed = 7
[limits]
items = $items
EOF
    local start=$SECONDS
    "$bin/judgelab" --db "$db" run "$work/$1.toml" > "$work/$1.out" || { cat "$work/$1.out"; exit 1; }
    grep -E '^(trial |#[0-9]|baseline|timed|[0-9]+ model calls)' "$work/$1.out"
    echo "($1: $((SECONDS - start)) s)"
}
"$bin/judgelab" --db "$db" import datasets/llmbar_natural.jsonl > /dev/null
pid=$(sampler sweep)
sweep gpu ""
echo "GPU memory during the sweep: $(peak_mem "$pid" sweep) MiB at most"
sweep cpu "gpu_layers = 0"
echo "== GPU against CPU, greedy (T = 0) and sampled (T = 1)"
# Trial ids are the database's: the GPU sweep, first into a fresh file, has 1 and 2.
"$bin/judgelab" --db "$db" compare check-cpu:3 check-gpu:1
"$bin/judgelab" --db "$db" compare check-cpu:4 check-gpu:2
echo "== done"
