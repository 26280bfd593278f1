#!/usr/bin/env bash
# The base models alone (--mode base-only) and + MADCluster (--mode full) on one dataset with a small
# CPU budget, the same for "alone" and "+ MADCluster" of a model: EPOCHS epochs max (early stopping,
# patience 3, on the last 20 % of train), training stride STRIDE, window 100, batch 128, one torch
# thread. Every test point is scored once.
#
#   bash benchmarks/tables/base_models.sh MSL                      # 3 epochs, stride 20, seeds 0 1 2
#   SEEDS=0 bash benchmarks/tables/base_models.sh SMAP             # one seed
#   SEEDS=0 EPOCHS=2 STRIDE=100 bash benchmarks/tables/base_models.sh SMD usad thoc   # some models
#   EXTRA="--embedder-param score_samples=1" bash benchmarks/tables/base_models.sh SMAP omnianomaly
#
# Writes one JSON per row and results.md to benchmarks/results/base_models_<dataset>/ (seeds already
# finished there are resumed, not rerun), then rebuilds benchmarks/results/table1.md from every
# base_models_* folder (benchmarks/tables/base_models_summary.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
MC=${MADCLUSTER:-.venv/bin/madcluster}
DATASET=${1:?usage: base_models.sh DATASET [MODEL ...]}
shift
OUT=benchmarks/results/base_models_$(echo "$DATASET" | tr '[:upper:]' '[:lower:]')
read -r -a SEEDS <<< "${SEEDS:-0 1 2}"
MODELS=("${@:-deepsvdd usad beatgan omnianomaly thoc anomaly_transformer dcdetector}")
read -r -a MODELS <<< "${MODELS[*]}"
for embedder in "${MODELS[@]}"; do
  for mode in base-only full; do
    args=(--dataset "$DATASET" --embedder "$embedder" --mode "$mode" --seeds "${SEEDS[@]}"
          --epochs "${EPOCHS:-3}" --stride "${STRIDE:-20}"
          --input-terms none)  # Table 1 compares the base model with its + MADCluster score alone
    read -r -a extra <<< "${EXTRA:-}"
    args+=("${extra[@]}")
    echo "+ $MC benchmark ${args[*]}" >&2
    "$MC" benchmark "${args[@]}" --threads 1 --executor sequential --out "$OUT" --quiet \
      || echo "FAILED: $embedder $mode" >&2
  done
done
.venv/bin/python benchmarks/tables/base_models_summary.py benchmarks/results
