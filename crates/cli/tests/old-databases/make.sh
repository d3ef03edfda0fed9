#!/usr/bin/env bash
# Rebuilds the old-database fixtures: each version's experiments run with the CLI of the
# last commit at that schema version, then `show --json` as that CLI printed it.
#   BIN=<dir with judgelab-ab850e9, judgelab-5d7bfee, judgelab-9e0a96d, judgelab-eb36354,
#        judgelab-b4dc3c5, judgelab-18ee53b, judgelab-e343aa7, judgelab-96e59c3,
#        judgelab-d0c6f32, judgelab-cea6835, judgelab-0685bdb, judgelab-bec54ff>
#   ./make.sh [VERSION...]   (default: all of 0001 … 0012)
#   PYTHON=<python with llama-cpp-python[server]>  MODEL=<the default model's .gguf>
# Build each binary from a worktree of its commit (`cargo build --bin judgelab`). Never
# needed by the tests: the databases are committed.
set -euo pipefail
cd "$(dirname "$0")"
: "${BIN:?}" "${PYTHON:?}" "${MODEL:?}"

make() {
  local version=$1 commit=$2; shift 2
  local bin="$BIN/judgelab-$commit" db="$version/judgelab.sqlite"
  rm -f "$db" "$db"-wal "$db"-shm
  rm -rf "$version/show" && mkdir -p "$version/show"
  for exp in "$@"; do
    # failed calls exit non-zero; 4 calls of each local trial timed alone (from 0005 on)
    JUDGELAB_TIMED_CALLS=4 "$bin" --db "$db" run --threads 2 "$version/$exp.toml" || true
  done
  if [ "$version" = 0006 ] || [ "$version" = 0007 ] || [ "$version" = 0008 ] || [ "$version" = 0009 ]; then
    # A load ramp of the remote experiment's first trial.
    local trial
    trial=$("$bin" --db "$db" show remote --json | "$PYTHON" -c "import json,sys; print(json.load(sys.stdin)['trials'][0]['id'])")
    "$bin" --db "$db" load remote --trial "$trial" --concurrency 1,2 --requests 4 --warmup 1 --json > /dev/null
  fi
  if [ "$version" = 0010 ]; then
    # An estimate of the first trial on the dataset's items without a label.
    local first
    first=$("$bin" --db "$db" show unlabelled --json | "$PYTHON" -c "import json,sys; print(json.load(sys.stdin)['trials'][0]['id'])")
    "$bin" --db "$db" estimate unlabelled --trial "$first" --json > /dev/null
  fi
  if [ "$version" = 0011 ]; then
    # A panel of the three trials added after the run, and labels from two annotators.
    local members
    members=$("$bin" --db "$db" show panels --json | "$PYTHON" -c "import json,sys; print(','.join(str(t['id']) for t in json.load(sys.stdin)['trials']))")
    "$bin" --db "$db" panel panels vote3 --members "$members" > /dev/null
    for given in ann:llmbar_natural-0001:a ann:llmbar_natural-0003:b ann:llmbar_natural-0004:t \
                 bob:llmbar_natural-0003:b bob:llmbar_natural-0004:a bob:llmbar_natural-0005:b; do
      IFS=: read -r who item label <<< "$given"
      "$bin" --db "$db" label panels --annotator "$who" --item "$item" --give "$label" > /dev/null
    done
  fi
  for exp in "$@"; do
    "$bin" --db "$db" show "$exp" --json > "$version/show/$exp.json"
  done
  "$PYTHON" -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('pragma wal_checkpoint(truncate)'); c.close()" "$db"
  rm -f "$db"-wal "$db"-shm
  rm -rf "$db"-runs  # the run lock's folder (from 0008's CLI on)
}

server() {
  "$PYTHON" -m llama_cpp.server --model "$MODEL" --model_alias smollm2 --host 127.0.0.1 \
    --port 47803 --n_ctx 512 > /tmp/old-databases-server.log 2>&1 &
  SERVER=$!
  trap 'kill $SERVER 2>/dev/null || true' EXIT
  for _ in $(seq 120); do
    curl -sf http://127.0.0.1:47803/v1/models > /dev/null && return
    sleep 1
  done
  echo "the server did not start: /tmp/old-databases-server.log" >&2
  exit 1
}

versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(0001 0002 0003 0004 0005 0006 0007 0008 0009 0010 0011 0012)
for version in "${versions[@]}"; do
  case $version in
    0001) make 0001 ab850e9 pairwise ratings ;;
    0002) make 0002 5d7bfee pairwise ratings ;;
    0003) [ -n "${SERVER:-}" ] || server; make 0003 9e0a96d local remote ;;
    0004) [ -n "${SERVER:-}" ] || server; make 0004 eb36354 exact ratings remote ;;
    0005) [ -n "${SERVER:-}" ] || server; make 0005 b4dc3c5 timed remote ;;
    0006) [ -n "${SERVER:-}" ] || server; make 0006 18ee53b timed remote ;;
    0007) [ -n "${SERVER:-}" ] || server; make 0007 e343aa7 timed remote ;;
    0008) [ -n "${SERVER:-}" ] || server; make 0008 96e59c3 timed remote race ;;
    0009) [ -n "${SERVER:-}" ] || server; make 0009 d0c6f32 timed remote race exact ;;
    0010) make 0010 cea6835 unlabelled ;;
    0011) make 0011 0685bdb panels ;;
    0012) make 0012 bec54ff criteria ;;
    *) echo "no such version: $version" >&2; exit 2 ;;
  esac
done
