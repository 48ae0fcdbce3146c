#!/usr/bin/env bash
# Compares the PDK wheel users install with another build of the same
# sources, in one interleaved run (bench_pdk.py --against):
#
#   bash bench/compare_builds.sh native  [bench_pdk.py options]
#       -DPDK_NATIVE=ON: one core compiled for this machine (-march=native),
#       the developers' build that is never shipped;
#   bash bench/compare_builds.sh onednn3 [bench_pdk.py options]
#       the default build, linked against the package index's oneDNN 3.2
#       (onednn-cpu-gomp 2023.2.0 and its headers, onednn-devel-cpu-gomp:
#       GNU OpenMP threading, like Debian's libdnnl 2.x that PDK ships)
#       instead of Debian's.
#
# The variant is built from the checkout's sources with scripts/build_wheel.sh
# into build/variants/<name>/ (its own CMake build; ccache shares the objects
# that do not change), installed into the venv build/variants/<name>/venv
# with the project venv's TensorFlow, and bench/bench_pdk.py runs from the
# project venv (A: the installed wheel) against that venv (B: the variant).
# Default cases: the train steps; pass --cases ... to choose.
# The project venv must be set up (scripts/setup.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VARIANT="${1:?usage: compare_builds.sh native|onednn3 [bench_pdk.py options]}"
shift
PY="$ROOT/.venv/bin/python"
SUB="build/variants/$VARIANT"
log() { echo "[compare_builds] $*" >&2; }
cd "$ROOT"
mkdir -p "$SUB"

case "$VARIANT" in
  native)
    DEFINES="PDK_NATIVE=ON"
    ;;
  onednn3)
    DNNL="$ROOT/$SUB/onednn"
    if [ ! -f "$DNNL/lib/cmake/dnnl/dnnl-config.cmake" ]; then
      log "downloading oneDNN 3.2 (onednn-cpu-gomp, onednn-devel-cpu-gomp 2023.2.0)"
      rm -rf "$DNNL" "$SUB/download"
      "$PY" -m pip download -q --no-deps -d "$SUB/download" \
        onednn-cpu-gomp==2023.2.0 onednn-devel-cpu-gomp==2023.2.0
      for w in "$SUB"/download/*.whl; do
        "$PY" -m zipfile -e "$w" "$SUB/download/x"
      done
      mkdir -p "$DNNL"
      cp -r "$SUB"/download/x/*.data/data/. "$DNNL/"
    fi
    DEFINES="dnnl_DIR=$DNNL/lib/cmake/dnnl;PDK_ISA_LEVELS=x86-64-v3"
    ;;
  *)
    echo "unknown variant $VARIANT (native, onednn3)" >&2
    exit 2
    ;;
esac

log "building the $VARIANT wheel ($DEFINES)"
WHEEL="$(PDK_BUILD_SUBDIR="$SUB" SKBUILD_CMAKE_DEFINE="$DEFINES" \
  bash scripts/build_wheel.sh "$PY" | tail -n 1)"
TF="$("$PY" -c 'import tensorflow as tf; print(tf.__version__)' 2>/dev/null)"
VPY="$("$PY" -c "
import pathlib, sys
sys.path.insert(0, 'scripts')
import venvs
print(venvs.venv_with(pathlib.Path('$SUB/venv'), ['tensorflow-cpu==$TF', 'scikit-learn']))")"
"$VPY" -m pip install -q --no-deps --force-reinstall "$WHEEL" >&2
log "bench: A = the project venv's PDK, B = $VARIANT"
exec "$PY" bench/bench_pdk.py --against "$ROOT/$VPY" \
  --cases digits,mlp,mlp_bf16,cnn,transformer,vit,lstm,mlp_loop,cnn_fit,resnet50 "$@"
