#!/usr/bin/env bash
# The main job: set everything up, then train a Keras MLP on scikit-learn's
# handwritten digits on the PDK device and print accuracy and placement.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="$(bash "$ROOT/scripts/setup.sh")"
cd "$ROOT" && unset TF_PLUGGABLE_DEVICE_LIBRARY_PATH && exec "$PYTHON" -m tensorflow_pdk.examples.digits "$@"
