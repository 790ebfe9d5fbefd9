#!/usr/bin/env bash
# Re-takes the README's screenshots: each page of kiln-desktop after the bundled demo model
# answered a prompt (profiling on), in the light theme, plus the chat in the dark theme.
# usage: gui/screenshots/update.sh [build-dir]   (kiln-desktop must be built there)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
app="${1:-$here/../../build}/gui/kiln-desktop"
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
mkdir -p "$home/config/kiln"
printf '[ui]\nprofiling=true\n\n[sampling]\nmax_tokens=160\n' > "$home/config/kiln/kiln-desktop.conf"
export XDG_DATA_HOME="$home/data" XDG_CONFIG_HOME="$home/config" QT_QPA_PLATFORM=offscreen
shoot() {  # page file [options]
  local page=$1 file=$2; shift 2
  "$app" --page "$page" --prompt "And God said" --screenshot "$here/$file" --quit "$@" | grep -E "screenshot|failed" || true
}
for page in chat models hardware profiler settings; do shoot "$page" "$page.png"; done
shoot chat chat-dark.png --theme dark
