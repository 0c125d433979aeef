#!/usr/bin/env bash
# Add FilingLens to the desktop's application menu (this user only): the .desktop entry, pointing at this
# bundle's program, and the icon. Run it again after moving the bundle; remove with --remove.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
APPS="${XDG_DATA_HOME:-$HOME/.local/share}/applications"
ICONS="${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor/scalable/apps"
if [ "${1:-}" = "--remove" ]; then
  rm -f "$APPS/filinglens.desktop" "$ICONS/filinglens.svg"
  echo "removed the FilingLens menu entry"
  exit 0
fi
mkdir -p "$APPS" "$ICONS"
cp "$HERE/_internal/resources/filinglens.svg" "$ICONS/filinglens.svg"
sed -e "s|^Exec=.*|Exec=\"$HERE/filinglens\" gui|" "$HERE/filinglens.desktop" > "$APPS/filinglens.desktop"
command -v update-desktop-database >/dev/null && update-desktop-database "$APPS" >/dev/null 2>&1 || true
echo "added FilingLens to the application menu ($APPS/filinglens.desktop)"
