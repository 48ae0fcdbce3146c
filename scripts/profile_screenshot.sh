#!/usr/bin/env bash
# Produces docs/images/tensorboard_trace_viewer.png: a real TensorFlow profile of
# three Keras training steps on /PDK:0 (tf.profiler.experimental.start/stop,
# train_on_batch of an MLP 784-1024-1024-10, batch 512, Adam), opened in
# TensorBoard's profile plugin (XProf) trace viewer, screenshot by headless
# Chromium. Needs: apt-get install chromium; a venv with tensorboard and
# tensorboard-plugin-profile ($TB_VENV, default /tmp/pdk-tb-venv, created here).
# Not part of the test suite (the xplane contents are tested by
# tests/python/test_profiler.py).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="$(bash "$ROOT/scripts/setup.sh")"
TB_VENV="${TB_VENV:-/tmp/pdk-tb-venv}"
[ -x "$TB_VENV/bin/tensorboard" ] || { python3 -m venv "$TB_VENV"; "$TB_VENV/bin/pip" install -q tensorboard tensorboard-plugin-profile; }
command -v chromium >/dev/null || { echo "needs chromium (apt-get install chromium)" >&2; exit 1; }
LOGDIR="$(mktemp -d)"
"$PY" - "$LOGDIR" <<'PYEOF'
import sys, numpy as np, tensorflow as tf, keras
x = np.random.default_rng(0).random((512, 784), dtype=np.float32)
y = np.random.default_rng(1).integers(0, 10, 512)
model = keras.Sequential([keras.Input((784,)), keras.layers.Dense(1024, activation="relu"),
                          keras.layers.Dense(1024, activation="relu"), keras.layers.Dense(10)])
model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
with tf.device("/PDK:0"):
    xd, yd = tf.identity(x), tf.identity(y)
    for _ in range(3):
        model.train_on_batch(xd, yd)                    # traced and warm
    tf.profiler.experimental.start(sys.argv[1])
    for _ in range(3):
        model.train_on_batch(xd, yd)
    tf.profiler.experimental.stop()
PYEOF
PORT=6123
"$TB_VENV/bin/tensorboard" --logdir "$LOGDIR" --port $PORT >/dev/null 2>&1 &
TB_PID=$!
trap 'kill $TB_PID 2>/dev/null; rm -rf "$LOGDIR"' EXIT
for _ in $(seq 60); do curl -sf "localhost:$PORT/data/plugin/profile/runs" >/dev/null && break; sleep 1; done
RUN="$(ls "$LOGDIR/plugins/profile")"
HOST="$(basename "$(ls "$LOGDIR/plugins/profile/$RUN/"*.xplane.pb)" .xplane.pb)"
DATA="$(python3 -c "import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1], safe=''))" \
  "/data/plugin/profile/data?run=$RUN&tag=trace_viewer@&host=$HOST")"
mkdir -p "$ROOT/docs/images"
chromium --headless --no-sandbox --enable-unsafe-swiftshader --hide-scrollbars \
  --window-size=1600,1000 --virtual-time-budget=30000 \
  --screenshot="$ROOT/docs/images/tensorboard_trace_viewer.png" \
  "http://localhost:$PORT/data/plugin/profile/trace_viewer_index.html?is_streaming=true&is_oss=true&trace_data_url=$DATA"
