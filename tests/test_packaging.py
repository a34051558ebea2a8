"""What users download is complete, licensed and free of build artefacts.

The archives are checked without compiling anything: the source
distribution is built with setuptools' PEP 517 hook, and the files a wheel
gets besides the compiled extension are those ``build_py`` collects (the
full wheel build, repair and test run is ``tools/check_wheel.sh``). Both
run on a copy of the source tree, so the checkout is left untouched. Tests
that need the source tree skip where there is none (e.g. when the test
suite runs against an installed wheel from a copy of ``tests/``).
"""

import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import sklearn_clda

REPO_ROOT = Path(__file__).resolve().parents[1]
IN_SOURCE_TREE = (REPO_ROOT / "setup.py").is_file() and (
    REPO_ROOT / "sklearn_clda" / "_sampling.pyx"
).is_file()
needs_source_tree = pytest.mark.skipif(
    not IN_SOURCE_TREE, reason="needs the source tree (setup.py, _sampling.pyx)"
)

LICENSE_FILES = ["LICENSE", "sklearn_clda/datasets/data/LICENSE-news16.txt"]
# Files the README and the docs send users to, or that the test suite and
# the documentation build read from the source tree.
SDIST_REQUIRED = LICENSE_FILES + [
    "README.md",
    "pyproject.toml",
    "setup.py",
    "MANIFEST.in",
    "sklearn_clda/_sampling.pyx",
    "sklearn_clda/_gibbs_kernel.h",
    "sklearn_clda/_partition_kernel.h",
    "sklearn_clda/_substeps.h",
    "sklearn_clda/_uniforms.h",
    "sklearn_clda/_substeps.pxd",
    "sklearn_clda/_mh_sampling.pyx",
    "sklearn_clda/_mh_kernel.h",
    "sklearn_clda/_sparse_mh_kernel.h",
    "sklearn_clda/datasets/data/news16.npz",
    "sklearn_clda/datasets/descr/news16.rst",
    "doc/conf.py",
    "doc/Makefile",
    "doc/index.rst",
    "doc/_templates/autosummary/class.rst",
    "doc/examples/GALLERY_HEADER.rst",
    "benchmarks/README.md",
    "benchmarks/_common.py",
    "tests/test_docs.py",
    "tests/datasets/test_datasets.py",
    "tools/check_wheel.sh",
]
BUILD_OUTPUT = re.compile(
    r"(\.(c|so|pyd|dylib|o|pyc)$|__pycache__|^build/|^dist/|"
    r"^doc/(_build|generated|auto_examples|_cli)/|sg_execution_times)"
)
# Absolute paths that exist on one machine only (home folders, work and
# scratch folders, a Windows user profile). Written so that the pattern
# does not match itself.
ABSOLUTE_PATH = r"(^|[^A-Za-z0-9_.~-])(/(work|home|root|Users|tmp|mnt|scratch)/|[A-Za-z]:\\(Users|work)\\)"


def _pyproject():
    tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python 3.11")
    with open(REPO_ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def _setuptools_at_least_77():
    setuptools = pytest.importorskip("setuptools")
    major = int(setuptools.__version__.split(".")[0])
    if major < 77:
        pytest.skip(f"building needs setuptools>=77.0.3, not {setuptools.__version__}")


def _copy_source_tree(dest):
    """Copy the checkout as it is, built extension and generated C included
    (the archives must leave them out), but without version control, build
    folders and the built HTML (large, and pruned by MANIFEST.in)."""
    shutil.copytree(
        REPO_ROOT,
        dest,
        ignore=shutil.ignore_patterns(
            ".git", "build", "dist", "*.egg-info", "__pycache__", "_build",
            ".pytest_cache",
        ),
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """``(sdist member names, PKG-INFO text, files build_py puts in wheels)``."""
    if not IN_SOURCE_TREE:
        pytest.skip("needs the source tree (setup.py, _sampling.pyx)")
    _setuptools_at_least_77()
    base = tmp_path_factory.mktemp("packaging")
    tree, out = base / "src", base / "dist"
    _copy_source_tree(tree)
    out.mkdir()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    hook = (
        "import sys; from setuptools.build_meta import build_sdist; "
        "print(build_sdist(sys.argv[1]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", hook, str(out)],
        cwd=tree, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    sdist = out / proc.stdout.strip().splitlines()[-1]
    with tarfile.open(sdist) as tf:
        members = tf.getnames()
        top = members[0].split("/")[0]
        pkg_info = tf.extractfile(f"{top}/PKG-INFO").read().decode()
    proc = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(base / "lib")],
        cwd=tree, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    wheel_files = sorted(
        p.relative_to(base / "lib").as_posix()
        for p in (base / "lib").rglob("*") if p.is_file()
    )
    return members, pkg_info, wheel_files


def test_sdist_is_self_contained(built):
    members, _, _ = built
    top = members[0].split("/")[0]
    assert re.fullmatch(r"sklearn_clda-[\w.]+", top)
    # Every member is a relative path inside the one top folder.
    for name in members:
        assert not name.startswith(("/", "\\")) and ":" not in name, name
        assert name == top or name.startswith(top + "/"), name
        assert ".." not in name.split("/"), name
    files = {name[len(top) + 1:] for name in members if name != top}
    missing = [f for f in SDIST_REQUIRED if f not in files]
    assert not missing, f"the sdist lacks {missing}"
    # Every gallery example and every test module travels.
    for folder, pattern in [("doc/examples", "*.py"), ("tests", "test_*.py")]:
        for path in (REPO_ROOT / folder).glob(pattern):
            assert path.relative_to(REPO_ROOT).as_posix() in files, path
    outputs = sorted(f for f in files if BUILD_OUTPUT.search(f))
    assert not outputs, f"the sdist holds build outputs: {outputs}"


def test_readme_pointers_are_in_the_sdist(built):
    """Paths that README.md names (`doc/`, `benchmarks/README.md`, ...) ship."""
    members, _, _ = built
    top = members[0].split("/")[0]
    files = {name[len(top) + 1:] for name in members}
    readme = (REPO_ROOT / "README.md").read_text()
    pointers = {
        p.rstrip("/") for p in re.findall(r"`([\w.-]+(?:/[\w.*-]+)+/?)`", readme)
        if (REPO_ROOT / p.rstrip("/")).exists()
    }
    assert pointers, "no path found in README.md"
    for pointer in pointers:
        assert any(f == pointer or f.startswith(pointer + "/") for f in files), pointer


def test_license_metadata(built):
    _, pkg_info, _ = built
    assert "License-Expression: BSD-3-Clause AND GPL-3.0-only" in pkg_info
    for path in LICENSE_FILES:
        assert f"License-File: {path}" in pkg_info
    # PEP 639: the expression replaces the license classifiers.
    assert "Classifier: License ::" not in pkg_info


def test_wheel_gets_data_and_licenses_but_no_sources(built):
    _, _, wheel_files = built
    assert "sklearn_clda/datasets/data/news16.npz" in wheel_files
    assert "sklearn_clda/datasets/data/LICENSE-news16.txt" in wheel_files
    assert "sklearn_clda/datasets/descr/news16.rst" in wheel_files
    sources = [f for f in wheel_files if f.endswith((".c", ".pyx", ".pxd", ".h"))]
    assert not sources, f"wheels would ship {sources}"


@needs_source_tree
def test_pyproject_license_fields():
    project = _pyproject()["project"]
    assert project["license"] == "BSD-3-Clause AND GPL-3.0-only"
    assert project["license-files"] == LICENSE_FILES
    for path in LICENSE_FILES:
        assert (REPO_ROOT / path).is_file(), path
    assert "BSD 3-Clause" in (REPO_ROOT / "LICENSE").read_text()
    data_license = (REPO_ROOT / LICENSE_FILES[1]).read_text()
    assert "news.rda" in data_license and "clda" in data_license
    assert "GNU GENERAL PUBLIC LICENSE" in data_license
    assert "Version 3, 29 June 2007" in data_license
    requires = _pyproject()["build-system"]["requires"]
    assert "setuptools>=77.0.3" in requires


def test_data_license_is_installed_next_to_the_data():
    data = Path(sklearn_clda.__file__).parent / "datasets" / "data"
    text = (data / "LICENSE-news16.txt").read_text()
    assert "GNU GENERAL PUBLIC LICENSE" in text
    assert (data / "news16.npz").is_file()


@needs_source_tree
def test_compiler_flags_per_compiler():
    setup_py = _load_setup_py()
    compile_args, link_args = setup_py.compiler_flags("msvc", "win32", False)
    assert compile_args == ["/O2", "/fp:precise"] and link_args == []
    for platform in ("linux", "darwin"):
        compile_args, link_args = setup_py.compiler_flags("unix", platform, False)
        assert "-ffp-contract=off" in compile_args and "-O3" in compile_args
        assert "-g0" in compile_args
        # macOS's linker has no -s; Linux strips the symbol table.
        assert link_args == (["-s"] if platform == "linux" else [])
    # MinGW is GCC: GCC's flags.
    assert "-ffp-contract=off" in setup_py.compiler_flags("mingw32", "win32", False)[0]
    # A debug build keeps its symbols.
    compile_args, link_args = setup_py.compiler_flags("unix", "linux", True)
    assert "-g0" not in compile_args and link_args == []


def _load_setup_py():
    import runpy
    from types import SimpleNamespace

    # Not run as __main__, so setup() is not called.
    return SimpleNamespace(**runpy.run_path(str(REPO_ROOT / "setup.py"), run_name="setup"))


@needs_source_tree
@pytest.mark.parametrize(
    "undefine",
    [
        pytest.param(["-U__x86_64__", "-U__i386__"], id="not-x86"),
        pytest.param(["-U__GNUC__", "-U__clang__"], id="not-gcc-or-clang"),
    ],
)
def test_avx2_kernel_is_compiled_only_on_x86_with_gcc_or_clang(tmp_path, undefine):
    """On ARM, and with MSVC, only the portable kernel exists.

    Emulated with the host's C preprocessor by undefining the macros that
    the header tests, without the host's system headers (a stub stdint.h;
    no immintrin.h at all, so including it fails); the result must not
    mention any AVX2 intrinsic.
    """
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        pytest.skip("needs a C compiler")
    source = tmp_path / "probe.c"
    source.write_text(
        "typedef long Py_ssize_t;\n"
        '#include "_gibbs_kernel.h"\n'
        "int have_avx2 = CLDA_HAVE_AVX2_KERNEL;\n"
        "clda_sweep_document_fn fn = clda_sweep_document_avx2;\n"
    )
    header_dir = REPO_ROOT / "sklearn_clda"
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    (stubs / "stdint.h").write_text("typedef int int32_t;\ntypedef long long int64_t;\n")

    def preprocess(extra):
        proc = subprocess.run(
            [cc, "-E", "-P", "-w", *extra, "-I", str(header_dir), str(source)],
            capture_output=True, text=True, timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    host = preprocess([])
    if "int have_avx2 = 1;" not in host:
        pytest.skip("the host is not x86 with GCC or Clang")
    assert "_mm256_" in host
    emulated = preprocess(["-nostdinc", "-I", str(stubs), *undefine])
    assert "int have_avx2 = 0;" in emulated
    assert "fn = clda_sweep_document_portable;" in emulated
    assert "_mm256_" not in emulated and "immintrin" not in emulated


@pytest.mark.parametrize("extension", ["_sampling", "_mh_sampling"])
def test_import_without_extension_says_how_to_build(tmp_path, extension):
    """A source tree without a compiled module: a clear ImportError."""
    package = Path(sklearn_clda.__file__).parent
    shutil.copytree(
        package, tmp_path / "sklearn_clda",
        ignore=shutil.ignore_patterns(f"{extension}.*.so", f"{extension}.*.pyd", "__pycache__"),
    )
    # Import the copy, and nothing else: drop finders that editable installs
    # of another checkout add (they would serve that checkout's extension).
    code = (
        "import sys\n"
        "sys.meta_path[:] = [f for f in sys.meta_path\n"
        "                    if not getattr(f, '__module__', '').startswith('__editable__')]\n"
        "import sklearn_clda\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode != 0
    last_line = proc.stderr.strip().splitlines()[-1]
    assert last_line.startswith("ImportError: "), proc.stderr
    assert "build it with `pip install -e .`" in last_line
    assert "circular import" not in proc.stderr
    assert f"sklearn_clda.{extension} is missing from" in last_line


@needs_source_tree
def test_no_absolute_paths_in_tracked_files():
    git = shutil.which("git")
    if git is None or not (REPO_ROOT / ".git").exists():
        pytest.skip("needs a git checkout")
    proc = subprocess.run(
        [git, "grep", "-n", "-I", "-E", ABSOLUTE_PATH],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode in (0, 1), proc.stderr  # 1: no match
    assert proc.stdout == "", f"absolute paths in tracked files:\n{proc.stdout}"


#: A negative literal as an index or a slice bound: ``x[-1]``, ``x[1:-1]``,
#: ``x[i, -2]``.
_NEGATIVE_INDEX = re.compile(r"\[\s*-\s*\d|:\s*-\s*\d|,\s*-\s*\d+\s*\]")


def _pyx_code_lines(path):
    """``(line number, code)`` of a .pyx file, docstrings and comments left out."""
    in_docstring = False
    for number, line in enumerate(path.read_text().splitlines(), 1):
        quotes = line.count('"""')
        if in_docstring:
            in_docstring = quotes % 2 == 0
            continue
        if quotes % 2:
            in_docstring = True
            line = line.split('"""')[0]
        else:
            line = re.sub(r'""".*?"""', "", line)
        yield number, line.split("#")[0]


@needs_source_tree
def test_pyx_code_has_no_negative_index():
    # setup.py compiles with wraparound=False, under which Cython is free to
    # mishandle a negative index even on a Python object: ids[-1] on a NumPy
    # array became "index -3 is out of bounds for axis 0 with size 2" in
    # every transform under Python 3.13 (and was right under 3.11).
    found = [
        f"{path.name}:{number}: {code.strip()}"
        for path in sorted((REPO_ROOT / "sklearn_clda").glob("*.pyx"))
        for number, code in _pyx_code_lines(path)
        if _NEGATIVE_INDEX.search(code)
    ]
    assert not found, "negative indices in Cython code:\n" + "\n".join(found)


def test_wheel_workflow_runs_for_every_compiled_source():
    # A pull request that changes a file the extensions are compiled from
    # rebuilds and tests the wheels (the list named two of the five headers).
    import fnmatch

    workflow = REPO_ROOT / ".github" / "workflows" / "wheels.yml"
    if not workflow.is_file():
        pytest.skip("needs the repository's .github folder")
    text = workflow.read_text(encoding="utf-8")
    paths = text.split("paths:", 1)[1].split("\n\n", 1)[0]
    patterns = re.findall(r'^\s*- "([^"]+)"', paths, flags=re.MULTILINE)
    sources = [
        path.relative_to(REPO_ROOT).as_posix()
        for suffix in ("*.pyx", "*.pxd", "*.h")
        for path in sorted((REPO_ROOT / "sklearn_clda").glob(suffix))
    ] + ["setup.py", "pyproject.toml"]
    missed = [s for s in sources if not any(fnmatch.fnmatchcase(s, p) for p in patterns)]
    assert len(sources) > 2 and not missed, missed
