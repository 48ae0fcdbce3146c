"""docs/tutorial.md cannot rot: each of its C++ and CMake blocks is a verbatim
excerpt of a file of examples/hello_device (which test_kit.py builds and runs)."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_code_block_is_in_the_example():
    text = (ROOT / "docs" / "tutorial.md").read_text()
    blocks = re.findall(r"```(cpp|cmake)\n(.*?)```", text, re.S)
    assert len(blocks) >= 10, "the tutorial lost its code"
    sources = [p.read_text() for p in (ROOT / "examples" / "hello_device").iterdir()
               if p.suffix in (".cc", ".h", ".txt")]
    missing = [code for _, code in blocks if not any(code in s for s in sources)]
    assert not missing, "tutorial blocks not found in examples/hello_device:\n" + "\n---\n".join(missing)
