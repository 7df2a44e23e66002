#!/usr/bin/env bash
# Containerize examples/quickstart end to end where no container registry is reachable (not part of CI):
#
#   1. a Debian minbase root filesystem with debootstrap (once; needs only the Debian mirror);
#   2. `tiffin build examples/quickstart/service.ts`;
#   3. `tiffin containerize quickstart --base-rootfs <rootfs>`: the base image is made from that folder
#      plus this machine's Node and npm, chroot isolation (works inside another container);
#   4. runs the image with runc as its non-root user and calls /classify inside the container.
#
# Needs root and: apt-get install podman buildah debootstrap runc
# (--no-healthcheck on run: podman drives health checks with systemd timers, absent here; the image keeps its HEALTHCHECK.)
# Environment: WORK (scratch folder, default /tmp/tiffin-containerize), DEBIAN_MIRROR (default: the first
# URIs entry of this machine's apt sources), TIFFIN_HOME (default $WORK/home).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-/tmp/tiffin-containerize}
export TIFFIN_HOME=${TIFFIN_HOME:-$WORK/home}
IMAGE=localhost/quickstart:latest
RUN_FLAGS=(--runtime runc --no-healthcheck --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --network none
  --read-only --tmpfs /tmp --rm)

for tool in podman debootstrap runc node; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install podman buildah debootstrap runc" >&2; exit 1; }
done
mkdir -p "$WORK"

tiffin() { (cd "$ROOT" && node --conditions=source --import tsx packages/cli/src/bin.ts "$@"); }
step() { printf '\n== %s\n' "$*"; }

if [ ! -x "$WORK/rootfs/usr/bin/apt-get" ]; then
  step "root filesystem $WORK/rootfs (debootstrap --variant=minbase bookworm)"
  mirror=${DEBIAN_MIRROR:-$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)}
  rm -rf "$WORK/rootfs"
  debootstrap --variant=minbase bookworm "$WORK/rootfs" ${mirror:+"$mirror"} >"$WORK/debootstrap.log" 2>&1
fi

step "tiffin build examples/quickstart/service.ts"
tiffin build examples/quickstart/service.ts

step "tiffin containerize quickstart --base-rootfs $WORK/rootfs"
tiffin containerize quickstart --backend podman --base-rootfs "$WORK/rootfs" --image-tag "$IMAGE" \
  --backend-arg=--isolation=chroot
podman image ls "$IMAGE"
podman image inspect "$IMAGE" --format 'user={{.Config.User}} ports={{json .Config.ExposedPorts}} healthcheck={{json .Config.Healthcheck.Test}}'

step "podman run (runc, read-only root): start the server and call /classify and /readyz inside the container"
podman run "${RUN_FLAGS[@]}" "$IMAGE" sh -c '
  node server.mjs >/tmp/server.log 2>&1 &
  for i in $(seq 1 50); do node -e "fetch(\"http://127.0.0.1:3000/readyz\").then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" && break; sleep 0.2; done
  echo "id: $(id -u):$(id -g)"
  node -e "
    const post = (p, b) => fetch(\"http://127.0.0.1:3000\" + p, { method: \"POST\", headers: { \"content-type\": \"application/json\" }, body: b });
    (async () => {
      const r = await post(\"/classify\", \"[[5.1,3.5,1.4,0.2],[6.7,3.0,5.2,2.3]]\");
      console.log(\"POST /classify ->\", r.status, await r.text());
      const h = await fetch(\"http://127.0.0.1:3000/readyz\");
      console.log(\"GET /readyz ->\", h.status);
    })();
  "
'
