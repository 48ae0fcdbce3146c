#!/usr/bin/env bash
# Builds the OPENCL plugin's wheel, tensorflow-pdk-opencl (plugins/opencl,
# docs/opencl.md), with the installed PDK kit, as an outside plugin author
# would: `pip wheel --no-build-isolation` in a venv that has TensorFlow and
# tensorflow-pdk (whose kit provides find_package(PDK)).
#
#   bash scripts/build_opencl_wheel.sh PYTHON
#
# -> build/dist-opencl/tensorflow_pdk_opencl-*.whl (tagged linux_x86_64: it
# links the system's OpenCL ICD loader and CLBlast, which it does not bundle),
# and the CMake build in build/opencl-wheel (its libpdk_opencl.so is what the
# tests load). Prints the wheel's path on its last line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="$1"
cd "$ROOT"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
export CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1
rm -rf build/dist-opencl
echo "[pdk opencl wheel] building (pip wheel)" >&2
"$PY" -m pip wheel -q --no-build-isolation --no-deps -C build-dir="$ROOT/build/opencl-wheel" \
  -w build/dist-opencl plugins/opencl >&2
ls build/dist-opencl/tensorflow_pdk_opencl-*.whl
