"""bench/bench_pdk.py keeps working: one tiny case, one round, against both
stock setups (the second one in its worker process), and its --breakdown
mode. Benchmarks are never timed assertions: only the output's shape is
checked, not a figure."""
import os
import subprocess
import sys

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "bench_pdk.py")


def test_bench_table_and_breakdown(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PDK_", "TF_ENABLE_ONEDNN"))}
    md = tmp_path / "bench.md"
    runs = [subprocess.Popen([sys.executable, BENCH, "--cases", "tiny_graph", *args], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for args in (("--repeats", "1", "--markdown", str(md)),
                         ("--breakdown", "--steps", "1"))]  # side by side: half the wall time
    (table_out, table_err), (out, err) = (r.communicate(timeout=300) for r in runs)
    assert runs[0].returncode == 0, table_err[-3000:]
    assert runs[1].returncode == 0, err[-3000:]

    # The table: one row, both stock columns filled, the ratio naming the better one.
    assert "PDK/better stock" in table_out, table_out
    table = md.read_text()
    row = next(ln for ln in table.splitlines() if ln.startswith("| tf.function of 100 tiny ops"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert all(cells[1:4]) and "—" not in cells[1:4], row
    assert cells[4].endswith(("(on)", "(off)")), row
    assert "stock, oneDNN off" in table and "stock, oneDNN on" in table, table

    # The breakdown: PDK's kernels from its own profiler plane, stock's from
    # TensorFlow's host tracer.
    assert "| | PDK | stock, oneDNN off | stock, oneDNN on |" in out, out
    assert "PDK: PDK profiler plane" in out, out
    assert "_PdkFusedElementwise" in out, out
    assert "Mul" in out and "AddV2" in out, out


def test_bench_against_another_pdk_installation(tmp_path):
    # --against PYTHON: the worker runs the case on its own PDK (here the same
    # installation: the mode compare_builds.sh uses for two builds); the
    # table has both PDK medians, stock's and the three ratios.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PDK_", "TF_ENABLE_ONEDNN"))}
    md = tmp_path / "against.md"
    r = subprocess.run([sys.executable, BENCH, "--against", sys.executable, "--cases",
                        "tiny_graph", "--repeats", "1", "--markdown", str(md)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    a, b = (next(ln for ln in r.stdout.splitlines() if ln.startswith(p)) for p in ("A ", "B "))
    assert "core x86-64" in a and "oneDNN" in a, a
    assert "core x86-64" in b and "oneDNN" in b, b
    row = next(ln for ln in md.read_text().splitlines()
               if ln.startswith("| tf.function of 100 tiny ops"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert len(cells) == 7 and all(cells), row
    assert all(float(c) > 0 for c in cells[4:]), row


def test_bench_loop_both_bodies():
    """bench/bench_loop.py runs both loop bodies on both devices (output shape
    only, no figure checked)."""
    loop = os.path.join(os.path.dirname(BENCH), "bench_loop.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PDK_")}
    for body in ("products", "counter"):
        r = subprocess.run([sys.executable, loop, "--body", body, "--iters", "20", "--repeats", "1"],
                           env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        for dev in ("/CPU:0", "/PDK:0"):
            assert any(ln.startswith(dev + ": ") and "us per iteration" in ln
                       for ln in r.stdout.splitlines()), r.stdout
