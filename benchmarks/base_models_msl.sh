#!/usr/bin/env bash
# The four base models alone (--mode base-only) and + MADCluster (--mode full) on MSL with a small
# CPU budget: 3 epochs max (early stopping, patience 3, on the last 20 % of train), training stride
# 20, window 100, batch 128, one torch thread, seeds 0 1 2 (SEEDS=... to change). The same budget
# for "alone" and "+ MADCluster" of a model. Every test point is scored once.
#
#   bash benchmarks/base_models_msl.sh > /tmp/base_models_msl.log 2>&1
#   bash benchmarks/base_models_msl.sh omnianomaly      # one model
#
# Writes one JSON per row and results.md to benchmarks/results/base_models_msl/ (seeds already
# finished there are resumed, not rerun), then the summary benchmarks/results/base_models_msl.md.
set -euo pipefail
cd "$(dirname "$0")/.."
MC=${MADCLUSTER:-.venv/bin/madcluster}
OUT=benchmarks/results/base_models_msl
read -r -a SEEDS <<< "${SEEDS:-0 1 2}"
MODELS=("${@:-deepsvdd beatgan usad omnianomaly}")
read -r -a MODELS <<< "${MODELS[*]}"
for embedder in "${MODELS[@]}"; do
  for mode in base-only full; do
    args=(--dataset MSL --embedder "$embedder" --mode "$mode" --seeds "${SEEDS[@]}" --epochs 3 --stride 20)
    echo "+ $MC benchmark ${args[*]}" >&2
    "$MC" benchmark "${args[@]}" --threads 1 --executor sequential --out "$OUT" --quiet
  done
done
.venv/bin/python benchmarks/base_models_summary.py "$OUT" benchmarks/results/base_models_msl.md
