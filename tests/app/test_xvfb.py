"""The real desktop path: `filinglens gui` on an X server (Xvfb), not Qt's offscreen platform."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from PySide6.QtGui import QImage


@pytest.fixture()
def xserver():
    """A private Xvfb display; skips when Xvfb is not installed (scripts/setup.sh installs it as root)."""
    if not shutil.which("Xvfb"):
        pytest.skip("Xvfb is not installed")
    read, write = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1400x900x24", "-nolisten", "tcp"],
                            pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as fh:
        display = fh.readline().strip()
    if not display:
        proc.kill()
        pytest.fail("Xvfb started without reporting a display")
    yield f":{display}"
    proc.terminate()
    proc.wait(10)


def test_gui_draws_on_an_x_server(xserver, app_home, tmp_path):
    png = tmp_path / "window.png"
    env = {**os.environ, "DISPLAY": xserver, "QT_QPA_PLATFORM": "xcb", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run([sys.executable, "-m", "engine.cli", "--home", str(app_home), "gui",
                           "--screenshot", str(png)], env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"wrote {png}" in done.stdout
    image = QImage(str(png))
    assert not image.isNull() and image.width() >= 800 and image.height() >= 500
    colors = {image.pixel(x, y) for x in range(0, image.width(), 37) for y in range(0, image.height(), 29)}
    assert len(colors) > 8, "the window drew nothing"
    assert (tmp_path / "config" / "FilingLens" / "FilingLens.conf").is_file()  # it closed normally: state saved
