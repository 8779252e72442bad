#!/usr/bin/env bash
# opscope's cpu device against onnxruntime's CPU build (onnxruntime-node, from
# ./setup.sh) on the model classes of issue 28, exported by Debian's torch:
#
#   bench/compare_vs_ort.sh [ROUNDS] [NAME ...]    # from the repository root, after ./setup.sh
#
# Models and inputs are made once into build/bench-models/ (bench/make_torch_models.py);
# bench/compare_vs_ort.py says how each side is timed and compared.
set -euo pipefail
cd "$(dirname "$0")/.."
models=build/bench-models
rounds=${1:-5}
shift || true
for m in "${@:-resnet18 googlenet mobilenet_v2 encoder bert}"; do
  for name in $m; do
    [ -f "$models/$name.onnx" ] || /usr/bin/python3 bench/make_torch_models.py "$models" "$name" >/dev/null
  done
done
exec /usr/bin/python3 bench/compare_vs_ort.py "$models" "$rounds" "$@"
