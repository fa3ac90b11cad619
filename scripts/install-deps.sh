#!/bin/sh
# Installs the Debian packages singa-tui needs to build, test and run its demos and benchmarks.
# Idempotent: apt-get skips what is already installed.  Run as root (or through sudo).
set -e
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
PKGS="build-essential autoconf automake libtool pkg-config
      liblua5.4-dev libopenblas-dev libzmq3-dev libncurses-dev zlib1g-dev
      dataset-fashion-mnist fortunes tmux openmpi-bin mpich python3 iproute2 graphviz groff-base
      slurmctld slurmd slurm-client"
[ "${1:-}" = "--bench" ] && PKGS="$PKGS python3-torch python3-numpy time"
missing=
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi
