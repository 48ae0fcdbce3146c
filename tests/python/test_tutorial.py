"""docs/tutorial.md cannot rot: each of its C++ and CMake blocks is a verbatim
excerpt of a file of examples/hello_device (which test_kit.py builds and runs),
and its shell and Python blocks run as written, from the wheel, in a venv that
has tensorflow-cpu 2.21.0 from the package index and nothing else.

The venv is build/tf-venvs/tutorial (PDK_TF_VENVS moves it; made once and
reused while its requirements are the same, pip's cache shared:
scripts/venvs.py). Before each run the wheel is uninstalled from it; the
tutorial's own `pip install` installs build/dist's wheel (scripts/setup.sh
builds it), copied into the working directory, and the example is copied
from the installed package, not from this checkout.
"""
import glob
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"
EXAMPLE = ROOT / "examples" / "hello_device"
sys.path.insert(0, str(ROOT / "scripts"))
import venvs  # noqa: E402

TENSORFLOW = "tensorflow-cpu==2.21.0"


OPENCL = ROOT / "plugins" / "opencl"
# Chapter 6 ("A device with its own memory") is taken from plugins/opencl;
# its Python block runs in test_opencl.py, where the OPENCL wheel is installed.
CHAPTER_6 = "\n## 6. "


def hello_part() -> str:
    return TUTORIAL.read_text().split(CHAPTER_6)[0]


def opencl_part() -> str:
    text = TUTORIAL.read_text()
    assert CHAPTER_6 in text, "the tutorial lost its chapter on a device with its own memory"
    return text.split(CHAPTER_6, 1)[1]


def blocks(lang: str, text: str = None) -> list:
    return re.findall(r"```%s\n(.*?)```" % lang, hello_part() if text is None else text, re.S)


def test_every_code_block_is_in_the_example():
    code_blocks = blocks("cpp") + blocks("cmake")
    assert len(code_blocks) >= 10, "the tutorial lost its code"
    sources = [p.read_text() for p in EXAMPLE.iterdir() if p.suffix in (".cc", ".h", ".txt")]
    missing = [code for code in code_blocks if not any(code in s for s in sources)]
    assert not missing, "tutorial blocks not found in examples/hello_device:\n" + "\n---\n".join(missing)


def test_every_code_block_of_chapter_6_is_in_the_opencl_plugin():
    text = opencl_part()
    code_blocks = blocks("cpp", text) + blocks("cmake", text) + blocks("c", text)
    assert len(code_blocks) >= 6, "chapter 6 lost its code"
    sources = [p.read_text() for p in OPENCL.rglob("*")
               if p.is_file() and (p.suffix in (".cc", ".h", ".cl") or p.name == "CMakeLists.txt")]
    missing = [code for code in code_blocks if not any(code in s for s in sources)]
    assert not missing, "chapter 6 blocks not found in plugins/opencl:\n" + "\n---\n".join(missing)


@pytest.fixture(scope="module")
def tutorial_venv():
    """(the venv's directory, the wheel): tensorflow-cpu alone, PDK uninstalled."""
    wheels = sorted(glob.glob(str(ROOT / "build" / "dist" / "tensorflow_pdk-*.whl")))
    if not wheels:
        pytest.skip("no PDK wheel in build/dist (scripts/setup.sh builds it)")
    for tool in ("cmake", "g++"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    root = pathlib.Path(os.environ.get("PDK_TF_VENVS", ROOT / "build" / "tf-venvs"))
    py = venvs.venv_with(root / "tutorial", [TENSORFLOW])
    subprocess.run([str(py), "-m", "pip", "uninstall", "-q", "-y", "tensorflow-pdk"], check=True,
                   capture_output=True)
    return py.parent.parent, wheels[-1]


def user_env(work: pathlib.Path) -> dict:
    """This environment less anything that points into the checkout or at
    PDK's settings; ccache as CMake's compiler launcher (a rerun is a cache
    hit; it changes no command of the tutorial)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PDK_", "CCACHE_")) and k not in (
               "PYTHONPATH", "VIRTUAL_ENV", "TF_PLUGGABLE_DEVICE_LIBRARY_PATH")}
    if shutil.which("ccache") is not None:
        env.update(CMAKE_CXX_COMPILER_LAUNCHER="ccache", CCACHE_BASEDIR=str(work),
                   CCACHE_NOHASHDIR="1")
    return env


def test_the_tutorial_runs_as_written_from_the_wheel(tmp_path, tutorial_venv):
    venv, wheel = tutorial_venv
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(wheel, work)
    env = user_env(work)
    shell = blocks("bash")
    assert any("pip install" in b for b in shell) and any("cmake --build" in b for b in shell)
    # The tutorial's premise: the venv is active.
    script = f"set -euo pipefail\nsource {venv}/bin/activate\n" + "\n".join(shell)
    r = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True,
                       timeout=1500)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]

    # The example came from the installed wheel, which ships this checkout's
    # example, and was built Release by the CMake package's default.
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import tensorflow_pdk as p; print(p.get_example_dir('hello_device'))"],
        cwd=work, env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert installed.startswith(str(venv) + "/"), installed
    shipped = sorted(p.name for p in pathlib.Path(installed).iterdir())
    assert shipped == sorted(p.name for p in EXAMPLE.iterdir()), shipped
    for name in shipped:
        assert (pathlib.Path(installed) / name).read_bytes() == (EXAMPLE / name).read_bytes(), name
        assert (work / "hello_device" / name).read_bytes() == (EXAMPLE / name).read_bytes(), name
    cache = (work / "build" / "hello" / "CMakeCache.txt").read_text()
    assert f"CMAKE_HOME_DIRECTORY:INTERNAL={work / 'hello_device'}\n" in cache
    assert "CMAKE_BUILD_TYPE:STRING=Release\n" in cache
    assert (work / "build" / "hello" / "libhello_device.so").is_file()

    # The Python blocks, one program, in the same directory; every output the
    # tutorial states ("prints `...`") in order.
    (work / "tutorial.py").write_text("\n".join(blocks("python")))
    r = subprocess.run([str(venv / "bin" / "python"), "tutorial.py"], cwd=work, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
    stated = re.findall(r"^prints `([^`]*)`", hello_part(), re.M)
    assert len(stated) == 3, stated
    assert r.stdout.splitlines() == stated, r.stdout + r.stderr[-3000:]


def test_get_example_dir_gives_the_shipped_example_and_names_what_is_shipped():
    import tensorflow_pdk

    try:
        hello = pathlib.Path(tensorflow_pdk.get_example_dir("hello_device"))
    except ValueError:
        pytest.skip("tensorflow_pdk is not installed from the wheel")
    assert sorted(p.name for p in hello.iterdir()) == sorted(p.name for p in EXAMPLE.iterdir())
    with pytest.raises(ValueError, match=r"no example plugin 'goodbye_device' in .*examples; "
                                         r"the wheel ships: hello_device$"):
        tensorflow_pdk.get_example_dir("goodbye_device")
