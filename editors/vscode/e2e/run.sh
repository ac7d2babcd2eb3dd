#!/usr/bin/env bash
# The netc extension in a real VS Code, driven as a person would: installs code-server (VS Code in the
# browser) and puppeteer-core from the npm registry into $VSC (default /tmp/vsc, never into the checkout),
# packages and installs this checkout's .vsix, starts code-server on localhost over a workspace holding a copy
# of examples/lenet.net, and runs drive.mjs in headless Chromium. Screenshots and results.json go to
# $VSC/shots. See README.md here. Not part of npm test or CI: it needs the npm registry and Debian packages.
set -euo pipefail

VSC=${VSC:-/tmp/vsc}
PORT=${PORT:-8765}
CODE_SERVER=${CODE_SERVER:-4.100.3} # the last code-server on Node 20 (VS Code 1.100)
repo=$(cd "$(dirname "$0")/../../.." && pwd)

need() {
  local missing=()
  for c in chromium g++ make python3 rg; do command -v "$c" >/dev/null || missing+=("$c"); done
  [ -e /usr/include/gssapi/gssapi.h ] || missing+=("gssapi.h")
  if [ ${#missing[@]} -gt 0 ]; then
    echo "missing: ${missing[*]}; on Debian: apt-get install chromium g++ make python3 ripgrep libkrb5-dev" >&2
    exit 1
  fi
  [ "$(node -p 'process.versions.node.split(".")[0]')" = 20 ] || { echo "code-server $CODE_SERVER needs Node 20" >&2; exit 1; }
}

# code-server's postinstall downloads ripgrep from GitHub and refuses to run as root under npm; do its steps here
install_code_server() {
  [ -e "$VSC/.installed-$CODE_SERVER" ] && return
  mkdir -p "$VSC" && cd "$VSC"
  [ -e package.json ] || npm init -y >/dev/null
  npm install --ignore-scripts "code-server@$CODE_SERVER" puppeteer-core@24
  npm rebuild argon2 # code-server's password hashing: built from source when no prebuilt binary can be fetched
  cd node_modules/code-server/lib/vscode
  npm install --omit=dev --ignore-scripts
  # the native modules VS Code's server loads (node-pty's own postinstall fails after it has built pty.node)
  npm rebuild kerberos @parcel/watcher @vscode/spdlog @vscode/deviceid native-watchdog
  npm rebuild node-pty || [ -e node_modules/node-pty/build/Release/pty.node ]
  mkdir -p node_modules/@vscode/ripgrep/bin && ln -sf "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
  ln -sfn node_modules node_modules.asar
  (cd bin/remote-cli && ln -sf code-linux.sh code-server)
  (cd bin/helpers && ln -sf browser-linux.sh browser.sh)
  (cd extensions && npm install --omit=dev)
  touch "$VSC/.installed-$CODE_SERVER"
}

need
install_code_server
cs="$VSC/node_modules/.bin/code-server"
"$cs" --version

# this checkout's CLI (the language server) and .vsix
(cd "$repo" && npm run build >/dev/null && npm run package-vscode -- --out "$VSC/netc.vsix")
rm -rf "$VSC/ud" "$VSC/ext" "$VSC/ws" "$VSC/shots"
mkdir -p "$VSC/ud" "$VSC/ext" "$VSC/ws/node_modules/.bin" "$VSC/shots"
"$cs" --user-data-dir "$VSC/ud" --extensions-dir "$VSC/ext" --install-extension "$VSC/netc.vsix"

# a project as `npm install netc` leaves it: node_modules/.bin/netc links to the package's bin/netc.js
cp "$repo/examples/lenet.net" "$VSC/ws/"
ln -s "$repo/bin/netc.js" "$VSC/ws/node_modules/.bin/netc"

"$cs" --auth none --bind-addr "127.0.0.1:$PORT" --user-data-dir "$VSC/ud" --extensions-dir "$VSC/ext" \
  --disable-telemetry --disable-workspace-trust "$VSC/ws" >"$VSC/code-server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 60); do
  curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break
  sleep 0.5
done

node "$repo/editors/vscode/e2e/drive.mjs" "http://127.0.0.1:$PORT/?folder=$VSC/ws" "$VSC/ws" "$VSC/shots" "$VSC"
