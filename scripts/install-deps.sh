#!/bin/sh
# Installs the Debian packages singa-tui needs to build, test and run its demos and benchmarks.
# Idempotent: apt-get skips what is already installed.  Run as root (or through sudo).
set -e
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
PKGS="build-essential autoconf automake libtool pkg-config
      liblua5.4-dev libopenblas-dev libzmq3-dev libncurses-dev zlib1g-dev
      dataset-fashion-mnist fortunes tmux openmpi-bin mpich python3 iproute2 graphviz groff-base
      slurmctld slurmd slurm-client python3-onnx strace"
# node and npm for onnxruntime-node (below), from Debian when the machine has none.
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || PKGS="$PKGS nodejs npm"
[ "${1:-}" = "--bench" ] && PKGS="$PKGS python3-torch python3-numpy time"
missing=
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi

# onnxruntime-node, which the ONNX tests (t/72xx) and demos/onnx_predict.js run exported models
# in, in a fixed folder outside the source tree ($SINGA_ONNXRUNTIME_DIR, where they look too).
# Its CPU library ships inside the npm package; its install script only fetches GPU parts (and
# fails offline), so it is skipped.  The version is the one the tests were written against.
ORT_DIR=${SINGA_ONNXRUNTIME_DIR:-/usr/local/lib/singa-onnxruntime}
if [ ! -f "$ORT_DIR/node_modules/onnxruntime-node/package.json" ]; then
  $SUDO mkdir -p "$ORT_DIR"
  $SUDO npm install --prefix "$ORT_DIR" --ignore-scripts --no-audit --no-fund onnxruntime-node@1.30.0
fi
