#!/usr/bin/env bash
# Runs the whole test suite: the C++ unit tests (ctest) and the Python tests
# (pytest) against the installed wheel and the real TensorFlow.
# Extra arguments go to pytest (e.g. -k matmul).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="$(bash "$ROOT/scripts/setup.sh")"
cd "$ROOT"
unset TF_PLUGGABLE_DEVICE_LIBRARY_PATH

export CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1
echo "== C++ unit tests (ctest)"
cmake -S . -B build/cpp -G Ninja -DPDK_BUILD_TESTS=ON -DPython3_EXECUTABLE="$PYTHON" >/dev/null
cmake --build build/cpp -j 2 --target kit_test tf_kit_test device_runtime_test graph_test
ctest --test-dir build/cpp --output-on-failure

echo "== Python tests (pytest)"
cd "$ROOT/tests/python"
"$PYTHON" -m pytest -q -p no:cacheprovider "$@"
