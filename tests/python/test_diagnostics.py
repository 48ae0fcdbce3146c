"""``python -m tensorflow_pdk`` (tensorflow_pdk/diagnostics.py): the report a
user runs when something looks wrong, and its exit code."""
import json
import os
import subprocess
import sys

import tensorflow_pdk


def _run(*args, **env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PDK_")}
    env.update(env_extra)
    return subprocess.run([sys.executable, "-m", "tensorflow_pdk", *args], env=env,
                          capture_output=True, text=True, timeout=300)


def test_report_and_self_test_pass():
    r = _run()
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "loaded: yes" in out and "/device:PDK:0: memory limit" in out, out
    for check in ("MatMul", "Conv2D", "Softmax", "Sum", "Keras training step"):
        assert f"ok   {check}:" in out, out
    assert "oneDNN: " in out and "OpenBLAS " in out, out
    assert out.rstrip().endswith("verdict: ok"), out


def test_json_reports_the_settings_in_force():
    r = _run("--json", "--no-self-test", PDK_NUM_THREADS="3", PDK_MEMORY_LIMIT_MB="512",
             PDK_STRICT="1")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["kernels"] == len(tensorflow_pdk.registered_kernels())
    assert rep["ops"] == len({k.op for k in tensorflow_pdk.registered_kernels()})
    assert rep["config"]["num_threads"] == 3
    assert [d["memory_limit_bytes"] for d in rep["devices"]] == [512 << 20]
    assert rep["environment"] == {"PDK_MEMORY_LIMIT_MB": "512", "PDK_NUM_THREADS": "3",
                                  "PDK_STRICT": "1"}
    assert rep["features"]["strict placement (PDK_STRICT)"] == "on"
    assert set(rep["isa"]) == {"AVX2", "FMA", "AVX-512", "AVX512_BF16", "AMX"}
    assert rep["self_test"] == [] and rep["ok"] is True


def test_disabled_pdk_exits_non_zero_with_the_reason():
    r = _run("--no-self-test", PDK_DEVICE_COUNT="0")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "loaded: no — PDK_DEVICE_COUNT=0" in r.stdout, r.stdout
    assert "PDK is disabled: PDK_DEVICE_COUNT=0" in r.stdout, r.stdout
