#!/usr/bin/env bash
# The four base models alone (--mode base-only) and + MADCluster (--mode full) on MSL, seed 0, with
# a small CPU budget: 3 epochs max (early stopping patience 3 on the last 20 % of train), training
# stride 20, window 100, batch 128, one torch thread. The same budget for "alone" and
# "+ MADCluster" of a model. Every test point is scored once.
#
#   bash benchmarks/base_models_msl.sh > /tmp/base_models_msl.log 2>&1
#
# Writes one JSON per run and results.md to benchmarks/results/base_models_msl/, then the summary
# benchmarks/results/base_models_msl.md.
set -euo pipefail
cd "$(dirname "$0")/.."
MC=${MADCLUSTER:-.venv/bin/madcluster}
OUT=benchmarks/results/base_models_msl
for embedder in deepsvdd omnianomaly beatgan usad; do
  for mode in base-only full; do
    echo "+ $MC benchmark --dataset MSL --embedder $embedder --mode $mode --seeds 0 --epochs 3 --stride 20" >&2
    "$MC" benchmark --dataset MSL --embedder "$embedder" --mode "$mode" --seeds 0 --epochs 3 \
      --stride 20 --threads 1 --executor sequential --out "$OUT" --quiet
  done
done
.venv/bin/python benchmarks/base_models_summary.py "$OUT" benchmarks/results/base_models_msl.md
