#!/usr/bin/env bash
# Re-takes the README's screenshots: each page of kiln-desktop after the bundled demo model
# answered a prompt twice (two versions, profiling on), in the light theme, plus the chat in the
# dark theme. The Models page lists a remote endpoint: `kiln serve` on the demo model, on loopback.
# usage: gui/screenshots/update.sh [build-dir]   (kiln-desktop and kiln must be built there)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
app="$build/gui/kiln-desktop"
home="$(mktemp -d)"
hub_pid=""
serve_pid=""
trap 'rm -rf "$home"; [ -n "$hub_pid" ] && kill "$hub_pid"; [ -n "$serve_pid" ] && kill "$serve_pid"' EXIT
demo="$here/../../resources/models/kiln-demo"
serve_port=$((20000 + RANDOM % 20000))
"$build/core/cli/kiln" serve --model "$demo" --backend cpu --port "$serve_port" >/dev/null 2>&1 &
serve_pid=$!
mkdir -p "$home/config/kiln"
printf '[ui]\nprofiling=true\n\n[sampling]\nmax_tokens=160\n\n[remote]\nendpoints\\1\\url=http://127.0.0.1:%s/v1\nendpoints\\size=1\n' \
  "$serve_port" > "$home/config/kiln/kiln-desktop.conf"
sleep 2
export XDG_DATA_HOME="$home/data" XDG_CONFIG_HOME="$home/config" QT_QPA_PLATFORM=offscreen
shoot() {  # page file [options]
  local page=$1 file=$2; shift 2
  "$app" --page "$page" --prompt "And God said" --screenshot "$here/$file" --quit "$@" | grep -E "screenshot|failed" || true
}
for page in chat models catalogue hardware profiler settings; do shoot "$page" "$page.png" --regenerate; done

# The Downloads page lists the bundled demo model from a hub stand-in on loopback: static files
# laid out as the hub's tree API and /resolve/ URLs answer (python3's http.server ignores the query).
hub="$home/hub"
mkdir -p "$hub/api/models/kiln/kiln-demo/tree" "$hub/kiln/kiln-demo/resolve/main"
cp "$demo"/* "$hub/kiln/kiln-demo/resolve/main/"
python3 - "$demo" > "$hub/api/models/kiln/kiln-demo/tree/main" <<'PY'
import hashlib, json, os, sys
entries = []
for name in sorted(os.listdir(sys.argv[1])):
    data = open(os.path.join(sys.argv[1], name), "rb").read()
    e = {"type": "file", "path": name, "size": len(data), "oid": "0"}
    if not name.endswith(".json"):  # the hub keeps weights and the tokenizer in LFS
        e["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 130}
    entries.append(e)
print(json.dumps(entries))
PY
port=$((20000 + RANDOM % 20000))
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$hub" >/dev/null 2>&1 &
hub_pid=$!
sleep 1
KILN_HF_ENDPOINT="http://127.0.0.1:$port" shoot downloads downloads.png --repo kiln/kiln-demo --download
shoot chat chat-dark.png --theme dark --regenerate
