"""Documentation matches the code."""
import pathlib
import runpy

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_ops_md_matches_registered_kernels():
    # The op/dtype part must match the plugin exactly; the measured "max |error|"
    # cells are machine-dependent, so they are read back from the committed file
    # (see the header of scripts/gen_ops_md.py).
    gen = runpy.run_path(str(ROOT / "scripts" / "gen_ops_md.py"))
    committed = (ROOT / "docs" / "ops.md").read_text()
    expected = gen["render"](gen["parse_errors"](committed))
    assert committed == expected, "docs/ops.md is stale: run scripts/gen_ops_md.py"


def test_every_registered_op_has_a_kernel_file():
    gen = runpy.run_path(str(ROOT / "scripts" / "gen_ops_md.py"))
    import tensorflow_pdk

    files = gen["kernel_files"]()
    missing = sorted({k.op for k in tensorflow_pdk.registered_kernels()} - set(files))
    assert not missing, f"ops whose kernel file the generator cannot find: {missing}"
